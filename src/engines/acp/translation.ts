/**
 * What translating a recorded attempt needs when it ran over ACP (`meta.transport: 'acp'`): the engine's own
 * translation adapter with the ACP parser in place of its native one (the stdout log is JSON-RPC), told where the
 * client sent its prompt (the prompt's `_meta.agentHarness.afterStdoutLine` in `.audit/acp-client.N.jsonl`), so a
 * loaded session's replayed history is skipped as it was live.
 */
import { isAgentHarnessError } from '../../errors/index.js';
import { MAX_AUDIT_FILE_BYTES, readInputBytesSync } from '../../runtime/bounded-input.js';
import type { TranslationAdapter } from '../engine.js';
import { createAcpParser } from './parse.js';

/** The line the prompt was sent after, from the client's file; null when it is missing or says nothing. */
export function promptLineOf(clientFile: string | undefined): number | null {
  if (!clientFile) return null;
  let text: string;
  try {
    // The client's file lies in the agent's working directory: never read through a link, a FIFO never waited on.
    text = readInputBytesSync(clientFile, {
      what: 'ACP client log',
      maxBytes: MAX_AUDIT_FILE_BYTES,
      noFollow: true,
    }).toString('utf8');
  } catch (error) {
    if (isAgentHarnessError(error, 'TRANSLATE_INPUT_INVALID')) return null;
    throw error;
  }
  for (const line of text.split('\n')) {
    if (!line.includes('"session/prompt"')) continue;
    try {
      const message = JSON.parse(line) as {
        method?: string;
        params?: { _meta?: { agentHarness?: { afterStdoutLine?: unknown } } };
      };
      const after = message.params?._meta?.agentHarness?.afterStdoutLine;
      if (message.method === 'session/prompt' && typeof after === 'number') return after;
    } catch {
      // not a message
    }
  }
  return null;
}

/** `adapter` as it translates an attempt of `transport` (`acp`: the ACP parser; otherwise `adapter` itself). */
export function translationForTransport(
  adapter: TranslationAdapter,
  transport: 'native' | 'acp' | undefined,
  clientFile?: string,
): TranslationAdapter {
  if (transport !== 'acp') return adapter;
  const promptAfterLine = promptLineOf(clientFile);
  return {
    id: adapter.id,
    errorPatterns: adapter.errorPatterns,
    acpNotice: adapter.acpNotice,
    createParser: () => createAcpParser({ promptAfterLine, notice: adapter.acpNotice }),
  };
}
