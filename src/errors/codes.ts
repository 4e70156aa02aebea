import type { FailureCategory } from '../protocol/fcmp.js';

/**
 * Stable error codes. A code never changes meaning once released; add new ones at the end of a group.
 * Each code carries a default hint: what the user should do about it.
 */
export const ERROR_CODES = {
  ENGINE_UNKNOWN: 'Use one of the engine ids listed by `agent-harness doctor`.',
  ENGINE_EXECUTABLE_MISSING:
    "Install the engine's CLI as a dev dependency of your project (`agent-harness doctor` names its package and version) or put it on PATH.",
  ENGINE_CAPABILITY_UNAVAILABLE: 'This engine cannot do that yet; pick another engine or drop the option.',
  ENGINE_CONFIG_INJECTION_FAILED: 'Check that the managed agent home is writable and its config file is valid.',
  ENGINE_TIMEOUT: 'Raise the timeout (--timeout-ms) or check the model script: the engine did not finish in time.',
  ENGINE_SPAWN_FAILED: 'Check the executable and its permissions; the process could not be started.',
  ENGINE_VERSION_UNCHECKED:
    "The installed engine CLI is a version its adapter was not checked against (`agent-harness doctor` names both): install a checked version (the pinned devDependency), or allow it with engineVersions 'warn' or 'any'.",
  ENGINE_SESSION_BUSY:
    'Another resume of this run is running (a session takes one writer at a time): wait for it to end, then resume again.',
  ENGINE_NEEDS_TERMINAL:
    "The engine started its full-screen terminal UI with its output going to a pipe, and was ended: its arguments did not select its headless mode. Put agent-harness's options before the engine's name (what follows it is the engine's), or give the engine's own headless arguments.",
  ACP_PROTOCOL_ERROR:
    "The engine broke the Agent Client Protocol over transport 'acp' (an answer missing or malformed, an error to initialize, session/new or session/prompt); its stdout log and .audit/acp-client.N.jsonl hold both directions. Try transport 'native'.",
  RUN_NOT_FOUND: 'List runs with `agent-harness runs`, then pass a handle, a run id or a run directory.',
  RUN_SELECTOR_AMBIGUOUS: 'Give more characters of the handle or the full run id.',
  RUN_STORE_CORRUPT:
    'A run record (.audit/run.json, named in the message) or the run index could not be read; restore or remove that run directory, or move a broken index.jsonl aside and the harness rebuilds it from the run directories.',
  RUN_NO_SESSION: 'The run has no session id recorded, so it cannot be resumed; start a new run.',
  RUN_DIR_MOVED:
    'A run is its directory: this one is a copy (or a move) of the run directory its run.json names. Resume the original by its handle, or start a new run.',
  SKILL_INVALID:
    'A skill is a directory with a plain name ([A-Za-z0-9._-], not starting with a dot) holding a SKILL.md.',
  ENV_LEAK_DETECTED:
    'Point SKILL_RUNNER_AGENT_HOME / SKILL_RUNNER_DATA_DIR / AGENT_HARNESS_RUN_ROOT outside your own HOME config directories.',
  CONFIG_INVALID: 'Fix the value named in the message.',
  USAGE_ERROR: 'Run the command with --help to see its usage.',
  MODEL_SCRIPT_INVALID: 'Fix the model script; its format is documented in docs/scripted-model.md.',
  MODEL_SERVER_FAILED: 'The scripted model server could not start or answer; check the port and the script.',
  TRANSLATE_INPUT_INVALID: 'Pass readable recorded output files.',
  WORKSPACE_INVALID:
    'A seed file path must be relative and stay inside the run directory; a template must be a directory whose symlinks stay inside it.',
  WORKSPACE_GIT_UNAVAILABLE: 'Install git, or start without a git repository (git: false / --no-git).',
  LLM_HTTP_ERROR:
    'The model endpoint answered an HTTP error; its status and body are in the details. Check the model name, key and endpoint.',
  LLM_TIMEOUT: 'The model call did not finish in time; raise the caller timeout (timeoutMs) or check the endpoint.',
  LLM_ABORTED: 'The model call was aborted by its AbortSignal.',
  LLM_CONNECTION_FAILED: 'The model endpoint could not be reached; check baseURL and that the server is running.',
  LLM_RESPONSE_INVALID: 'The model endpoint answered something that is not a valid response of its wire API.',
  LLM_RESPONSE_TOO_LARGE:
    'The model endpoint sent a larger body than the caller reads (maxResponseBytes); check the endpoint, or raise maxResponseBytes if such answers are expected.',
  ORCHESTRATOR_INPUT_INVALID: 'Pass a non-empty message (a string, or { role, content } with text content).',
  DEPENDENCY_MISSING:
    'An optional peer dependency (named in the message: a vendor SDK, OpenTelemetry, the ACP SDK) is not installed; install it in your project with the npm install command the message gives.',
  INTERNAL_ERROR: 'This is a bug in agent-harness; please report it with the run directory.',
  FLUENT_RECORDING_INVALID:
    'Run the harness live (or the test with -u) to write its recording; a recording is versioned JSON.',
  FLUENT_REPLAY_MISMATCH:
    'The harness asks for calls the recording lacks or in another order; re-record it live (-u in Vitest).',
  HARNESS_INTERRUPTED:
    'The harness process ended (kill -9, second Ctrl-C, crash) before the attempt finished; resume the run to continue.',
  AUDIT_WRITE_FAILED:
    'An audit file could not be written (disk full or not writable); free space and check the run directory.',
  AUDIT_TAMPERED:
    "An audit file the harness reads back was changed while the attempt ran (the run directory is the engine's working directory); the attempt's events in it are not used. Keep the agent away from .audit.",
  ISOLATION_UNAVAILABLE:
    'Network and PID namespaces are unavailable here (not Linux, no util-linux unshare or iproute2 ip, or user namespaces disabled); see `agent-harness doctor`, or allow the fallback with --isolation auto.',
  ISOLATION_SETUP_FAILED:
    "The agent's filesystem (its mount namespace) could not be set up, so the engine was not started: the message names the step, the path and what the tool said. The harness never falls back to the host filesystem once a plan was chosen; check what you exposed and the MCP servers' paths, or report it with `agent-harness doctor`'s output.",
  MCP_SERVER_UNREACHABLE:
    "An HTTP MCP server must be on the host's loopback (127.0.0.1, localhost or [::1]) in scripted mode: the agent's network namespace reaches nothing else. Run the server on 127.0.0.1, or use --isolation off (or live mode) to keep the host network.",
  MCP_SERVER_STARTUP_STALLED:
    "The engine never started its turn while starting its stdio MCP servers (no model call, or in live mode no output, by the longest startupTimeoutMs plus a 30 s grace): a server that floods stdout or never answers can stall the engine's own MCP client. Run the server's command by hand; keep its logs on stderr.",
  INPUT_NOT_REGULAR_FILE:
    'Pass a regular file: a FIFO, a device (/dev/zero, /dev/stdin) or a directory can block or never end. Save the output to a file first.',
  INPUT_TOO_LARGE:
    'The file is larger than the harness reads whole; shrink it or raise the limit (AGENT_HARNESS_MAX_SCRIPT_BYTES for model scripts, AGENT_HARNESS_MAX_CASSETTE_BYTES for cassettes).',
  INTERRUPTED: 'The command was stopped by SIGINT/SIGTERM before it finished; run it again.',
  EXPORT_FAILED:
    'The attempt could not be exported: check that its audit files (.audit/fcmp.N.jsonl, rasp.N.jsonl) are intact, and that the OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) accepts OTLP/HTTP.',
  BUILD_MISSING:
    'The command runs the compiled dist/: in a checkout run `npm ci` or `npm run build` (`npm run cli -- <args>` runs the sources instead).',
  VIEW_SERVER_FAILED:
    '`agent-harness view` could not listen on 127.0.0.1 at that port (in use, or not allowed); pick another with --port, or --port 0 for any free one.',
  CASSETTE_MISS:
    'The engine asked for something the cassette did not record (the diff names the first difference); re-record it (--model record, or -u in Vitest), or replay leniently to fall back to the scripted model.',
  CASSETTE_DIVERGENCE:
    'A request matched a recorded one at the same place in the conversation but differs in the fields listed; it was served. Re-record if the difference matters.',
  CASSETTE_UNUSED:
    'The cassette holds interactions the engine never asked for; the conversation took another path. Re-record it.',
  CASSETTE_INVALID:
    'The cassette is not a valid agent-harness.cassette/1 file; re-record it (--model record, or -u in Vitest).',
  CASSETTE_NOT_FOUND:
    'No cassette at that path: record one first (--model record --cassette FILE), or use --model auto to record when it is missing.',
  CASSETTE_KEY_MISSING:
    'Recording calls the vendor with your key: set it in the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY), or replay an existing cassette.',
  CASSETTE_UPSTREAM_FAILED:
    'The upstream (the vendor, or --upstream) could not be reached while recording; check the URL and your network.',
  MODEL_SCRIPT_EXHAUSTED:
    'The engine asked the scripted model for more turns than the script has: add turns (a final one to end the turn), or resume with a --script that has them; docs/scripted-model.md.',
  JUDGE_FAILED:
    'The LLM judge could not grade the trial (its caller failed, or its answer had no score): the trial is counted apart, never as a pass or a fail. Check the judge caller, or re-record its cassette.',
  GRADER_FAILED:
    'A grader threw instead of grading; the message names it. Fix the grader (a grade is a score in [0, 1] with a reason).',
  SKILL_NOT_LOADED:
    'The engine never showed the model the skill body the stand-in was to follow (follow_skill): check that the skill is injected (onlySkills, skill roots) and that the engine loads it.',
} as const;

/** A stable error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The failure category (`conversation.failed` `data.category`) of a harness code that fails an attempt after the
 * engine ran; a code not listed is `unknown`. A cassette or a script that cannot answer the engine is the model's
 * side of the conversation failing (`model`); an upstream that cannot be reached while recording is `network`.
 */
export const ERROR_CATEGORIES: Readonly<Partial<Record<ErrorCode, FailureCategory>>> = {
  CASSETTE_MISS: 'model',
  CASSETTE_UNUSED: 'model',
  CASSETTE_INVALID: 'model',
  CASSETTE_NOT_FOUND: 'model',
  CASSETTE_KEY_MISSING: 'auth',
  CASSETTE_UPSTREAM_FAILED: 'network',
  MODEL_SCRIPT_EXHAUSTED: 'model',
  ENGINE_TIMEOUT: 'timeout',
  ENGINE_NEEDS_TERMINAL: 'protocol',
  MCP_SERVER_STARTUP_STALLED: 'timeout',
};

/** The failure category of a harness error code (see {@link ERROR_CATEGORIES}). */
export function categoryOfCode(code: ErrorCode): FailureCategory {
  return ERROR_CATEGORIES[code] ?? 'unknown';
}
