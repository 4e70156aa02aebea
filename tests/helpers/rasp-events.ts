/** RASP events for translator and judge tests, built by hand. */
import { type EngineId, RASP_VERSION, type RaspData, type RaspEvent } from '../../src/protocol/index.js';

/** `data` as the RASP events of run `r`, attempt 1, of `engine`: consecutive seq numbers and timestamps from 1. */
export function raspEvents(engine: EngineId, ...data: RaspData[]): RaspEvent[] {
  return data.map((d, i) => ({
    protocol_version: RASP_VERSION,
    run_id: 'r',
    attempt: 1,
    seq: i + 1,
    ts: new Date(1_700_000_000_000 + i).toISOString(),
    engine,
    data: d,
    raw_ref: null,
  }));
}
