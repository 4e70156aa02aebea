/**
 * The protocol version tags and the engine id's form as plain constants, without zod: the per-line translation path
 * (`translate` of a long recording) stamps events with them and never loads a schema. The schema modules
 * re-export them, so `protocol/index.js` offers them as before.
 */

/** Version tag written in every RASP event. */
export const RASP_VERSION = 'rasp/1.0';

/** Version tag written in every FCMP envelope. */
export const FCMP_VERSION = 'fcmp/1.0';

/** Version tag of the conformance report. */
export const CONFORMANCE_VERSION = 'agent-harness.conformance/1';

/** Version tag of `meta.N.json`. */
export const META_VERSION = 'agent-harness.meta/1';

/** Version tag of the legacy run index file, `index.json` (`RunIndexSchema`). */
export const RUN_INDEX_VERSION = 'agent-harness.index/1';

/** Version tag of the run index log, `index.jsonl`, in its header line. */
export const RUN_INDEX_LOG_VERSION = 'agent-harness.index/2';

/** The isolation modes an attempt can ask for (`IsolationModeSchema` is built from them). */
export const ISOLATION_MODE_VALUES = ['auto', 'require', 'off'] as const;

/**
 * The form of an engine id (`EngineIdSchema` is built from it): lower-case letters, as in a run id
 * (`<time>-<engine>-<hex8>`). Which ids exist is the engine registry's business (`src/engines/registry.ts`), not the
 * protocol's: a record of an engine registered at run time is as valid as one of a built-in engine.
 */
export const ENGINE_ID_PATTERN = /^[a-z]{1,32}$/;

/**
 * The done marker of the completion contract: injected skills ask the agent to end with it, the completion judge
 * looks for it, and the scripted model appends it to `final` turns with `done: true`.
 */
export const DONE_MARKER = '__SKILL_DONE__';
