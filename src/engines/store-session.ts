/**
 * A session id read from the engine's own session store while the attempt runs, for an engine that names its
 * session on stdout only at the end of the turn (copilot's closing `result` line): the `engine.session` event then
 * comes before the first event the engine prints, as every other engine's does, so a provider's stream opens with its
 * `session` event and a caller can resume or cancel by id while the turn is still running.
 */
import type { EngineParser, ParserOutput } from './engine.js';

/**
 * Lines after which the store is no longer looked in: the engine writes its session before its first line (copilot
 * 1.0.102: `session-state/<id>/workspace.yaml` exists when the first event is printed), so a store still empty by then
 * will not name it; bounding the look-ups keeps a long stream from reading the store on every line.
 */
const LOOKUP_LINES = 64;

/**
 * `parser`, with an `engine.session` for the id `lookup` returns put before the outputs of the first line it returns
 * one for; the parser's own `engine.session` for the same id later is dropped (another id is kept: the engine's own
 * word wins). `lookup` is called per line until it finds the session, the parser names one, or {@link LOOKUP_LINES}
 * lines have passed. It must not throw.
 */
export function withStoreSession(parser: EngineParser, lookup: () => string | null): EngineParser {
  let found: string | null = null;
  let looking = true;
  let lines = 0;
  const own = (outputs: ParserOutput[]): ParserOutput[] => {
    if (found === null) {
      if (outputs.some((output) => output.type === 'engine.session')) looking = false;
      return outputs;
    }
    const kept = outputs.filter((output) => !(output.type === 'engine.session' && output.session_id === found));
    return kept.length === outputs.length ? outputs : kept;
  };
  return {
    line(stream, text) {
      if (looking) {
        lines += 1;
        const id = lookup();
        if (id !== null || lines >= LOOKUP_LINES) looking = false;
        if (id !== null) {
          found = id;
          return [{ type: 'engine.session', session_id: id }, ...own(parser.line(stream, text))];
        }
      }
      return own(parser.line(stream, text));
    },
    end() {
      return own(parser.end());
    },
  };
}
