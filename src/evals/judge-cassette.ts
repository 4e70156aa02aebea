/**
 * A judge's cassette: the judge's model calls recorded once and replayed keyless, with the same cassette machinery
 * (`src/cassette/`) as an engine's. A model server on 127.0.0.1 fronts the judge's caller: in `record` it forwards each
 * call to `upstream` (the judge's real endpoint, the key from `hostEnv`) and writes the cassette; in `replay` it
 * answers from the cassette and nothing leaves the machine, so a replayed trial is re-judged identically. Point the
 * caller at `url` (`createOpenAiChatCaller({ baseURL: `${url}/v1` })`, `createAnthropicMessagesCaller({ baseURL: url })`).
 */
import { loadCassette, openCassette, type CassetteReport } from '../cassette/index.js';
import { AgentHarnessError } from '../errors/index.js';
import { listenModelServer } from '../model/server.js';

/** Options of {@link openJudgeCassette}. */
export interface JudgeCassetteOptions {
  /** `record` writes `file` from the judge's real endpoint; `replay` answers from it. */
  mode: 'record' | 'replay';
  /** The cassette file (beside the trial's own: `<trial cassette>.judge.json` is the convention). */
  file: string;
  /** `record`: the origin of the judge's endpoint (default: the vendor of the caller's wire API). */
  upstream?: string | null;
  /** `record`: where the vendor key is read from (default `process.env`); it never reaches the cassette. */
  hostEnv?: NodeJS.ProcessEnv;
}

/** A judge cassette being recorded or replayed. */
export interface JudgeCassette {
  /** The origin the judge's caller is pointed at (`http://127.0.0.1:PORT`). */
  readonly url: string;
  /**
   * Stops the server and reports; in `record`, writes the cassette. Throws what failed (CASSETTE_MISS: the judge asked
   * something the cassette does not hold; CASSETTE_UNUSED: it asked less).
   */
  finish(): Promise<CassetteReport>;
}

/** Opens a judge cassette (see the module comment). CONFIG_INVALID for another mode. */
export async function openJudgeCassette(options: JudgeCassetteOptions): Promise<JudgeCassette> {
  if (options.mode !== 'record' && options.mode !== 'replay')
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `openJudgeCassette: mode must be "record" or "replay", got ${JSON.stringify(options.mode)}.`,
      { details: { option: 'mode' } },
    );
  const session = openCassette({
    mode: options.mode,
    file: options.file,
    ...(options.mode === 'replay' ? { cassette: loadCassette(options.file) } : {}),
    upstream: options.upstream ?? null,
    hostEnv: options.hostEnv ?? process.env,
    engine: 'judge',
  });
  const server = await listenModelServer({ intercept: session.intercept, tools: [] });
  return {
    url: server.url,
    async finish() {
      await server.close();
      const report = await session.finish();
      if (report.error) throw report.error;
      return report;
    },
  };
}
