/**
 * FCMP built live: the attempt's one normalized stream. Each RASP event is translated as the engine's output is
 * parsed, beside the RASP spool, and every FCMP event is written to `fcmp.N.jsonl` at once (a synchronous write: a
 * crash loses nothing already translated) and handed to the live views (`AttemptRequest.onFcmpEvent`).
 *
 * A shell call whose exit code the engine states only in its next model request (gemini's function response) is an
 * item that starts now and completes later, as in the Codex SDK: its `tool.call` goes out at once, its `tool.result`
 * when the model server has seen the request that states the code (looked for before each later RASP event, and at
 * the end). Nothing here knows an engine: the translator is driven by the adapter's facts, so a new engine needs no
 * change here.
 */
import type { FcmpEvent, RaspEvent, RawRef } from '../protocol/index.js';
import type { CompletionJudgement } from '../translate/completion.js';
import type { ConformanceTally } from '../translate/conformance.js';
import { createFcmpTranslator, type FcmpTranslateOptions } from '../translate/fcmp.js';
import { exitCodesFromModelRequests } from '../translate/tool-calls.js';
import type { EventSpool } from './event-spool.js';

/** What {@link createLiveFcmp} needs. */
export interface LiveFcmpInput {
  /** The translator's options (`awaitModelExitCodes` is set here when model requests can be seen). */
  options: FcmpTranslateOptions;
  /** Where the FCMP events are written as they come (`fcmp.N.jsonl`). */
  spool: EventSpool<FcmpEvent>;
  tally: ConformanceTally;
  /** The engine's model requests so far; null in live mode (no model server: codes come only from the stream). */
  requests: Promise<(() => readonly { body: unknown }[]) | null>;
  /** Every RASP event, in order: after the FCMP events completed before it, before those it gives. */
  onRaspEvent?: (event: RaspEvent) => void;
  /** Every FCMP event, in order, once written. */
  onEvent?: (event: FcmpEvent) => void;
}

/** The live FCMP of one attempt. */
export interface LiveFcmp {
  /** Translates the next RASP event (after completing the held results the model requests now state). */
  push(event: RaspEvent): void;
  /** The translator's own verdict on the events so far. */
  verdict(): CompletionJudgement;
  /** Ends the stream: held results completed or given as they are, open calls abandoned, the terminal event. */
  finish(judgement: CompletionJudgement, evidenceRef?: RawRef | null): Promise<void>;
  /** The text of the last `assistant.message.final`, or null. */
  readonly finalMessage: string | null;
}

/** Starts the live FCMP of an attempt; push each RASP event as it is built. */
export function createLiveFcmp(input: LiveFcmpInput): LiveFcmp {
  const translator = createFcmpTranslator({ ...input.options, awaitModelExitCodes: true });
  let requests: (() => readonly { body: unknown }[]) | null = null;
  void input.requests.then(
    (read) => {
      requests = read;
    },
    () => undefined,
  );
  /** Requests already looked at for exit codes. */
  let seen = 0;
  let finalMessage: string | null = null;
  const emit = (events: readonly FcmpEvent[]): void => {
    for (const event of events) {
      input.spool.push(event);
      input.tally.fcmp(event);
      if (event.type === 'assistant.message.final') finalMessage = event.data.text;
      input.onEvent?.(event);
    }
  };
  const learn = (): void => {
    if (translator.heldResults === 0 || !requests) return;
    const all = requests();
    if (all.length <= seen) return;
    const codes = exitCodesFromModelRequests(all.slice(seen));
    seen = all.length;
    emit(translator.learnExitCodes(codes));
  };
  return {
    push(event) {
      learn();
      input.onRaspEvent?.(event);
      input.tally.rasp(event);
      emit(translator.push(event));
    },
    verdict: () => translator.verdict(),
    async finish(judgement, evidenceRef) {
      // The model server (once it listens) has every request the engine made by now.
      requests ??= await input.requests.catch(() => null);
      learn();
      emit(translator.finish(judgement, evidenceRef));
    },
    get finalMessage() {
      return finalMessage;
    },
  };
}
