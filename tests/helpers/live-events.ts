/**
 * An attempt's events in their live order (each RASP event followed by the FCMP events it gave, then FCMP's end), as
 * `AttemptRequest.onRaspEvent`/`onFcmpEvent` give them, for testing the views' mappers without an engine.
 */
import type { EngineId, RaspEvent } from '../../src/protocol/index.js';
import type { AttemptEvent } from '../../src/translate/attempt-events.js';
import { createFcmpTranslator, type FcmpTranslateOptions } from '../../src/translate/fcmp.js';

/** `rasp` translated live; `options` override the defaults (a start of run `r`, attempt 1, no error patterns). */
export function liveEvents(
  rasp: readonly RaspEvent[],
  options: Partial<FcmpTranslateOptions> & { end?: boolean } = {},
): AttemptEvent[] {
  const engine: EngineId = options.engine ?? rasp[0]?.engine ?? 'codex';
  const translator = createFcmpTranslator({
    runId: 'r',
    attempt: 1,
    seqStart: 0,
    launch: 'start',
    errorPatterns: [],
    ...options,
    engine,
  });
  const out: AttemptEvent[] = [];
  for (const event of rasp) out.push(event, ...translator.push(event));
  if (options.end !== false) out.push(...translator.finish());
  return out;
}
