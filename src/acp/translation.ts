/**
 * What translating a recorded attempt needs when it ran over ACP (`meta.transport: 'acp'`): the engine's own
 * translation adapter with the ACP parser in place of its native one (the stdout log is JSON-RPC).
 */
import type { TranslationAdapter } from '../engines/engine.js';
import { createAcpParser } from './parse.js';

/** `adapter` as it translates an attempt of `transport` (`acp`: the ACP parser; otherwise `adapter` itself). */
export function translationForTransport(
  adapter: TranslationAdapter,
  transport: 'native' | 'acp' | undefined,
): TranslationAdapter {
  if (transport !== 'acp') return adapter;
  return { id: adapter.id, errorPatterns: adapter.errorPatterns, createParser: createAcpParser };
}
