/**
 * Vitest global setup of this repository's tests: no test may leave an attempt daemon of this checkout running.
 * The daemon is on by default outside a CI job, and a test's own environment (a sandbox's, built from nothing) names
 * no CI job; so every test runs the CLI with `AGENT_HARNESS_DAEMON=off` (`vitest.config.ts` sets it for the workers,
 * `tests/helpers/cli.ts` for its sandboxes), and the daemon tests turn it on in a directory of their own and stop
 * what they started. A CLI run that forgot would start a daemon that outlives the suite: this fails the run instead.
 */
import path from 'node:path';
import { eventually, pidsWithMarker } from '../helpers/processes.js';

/** The command line of a daemon started from this checkout's bin. */
const DAEMON_MARKER = `${path.resolve(import.meta.dirname, '..', '..', 'bin', 'agent-harness.js')} daemon serve`;

/** Notes the daemons already running (a developer's own); the teardown fails on any other still running. */
export default function setup(): () => Promise<void> {
  const before = new Set(pidsWithMarker(DAEMON_MARKER));
  const started = (): number[] => pidsWithMarker(DAEMON_MARKER).filter((pid) => !before.has(pid));
  return async () => {
    // A daemon test's last `daemon stop` may still be ending.
    if (await eventually(() => started().length === 0, 10_000)) return;
    const left = started();
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // ended meanwhile
      }
    }
    // Vitest reports an error of a global teardown but does not fail the run for it.
    process.exitCode = 1;
    throw new Error(`the tests left ${left.length} attempt daemon(s) of this checkout running (pids ${left.join(', ')}, now stopped): a CLI run without AGENT_HARNESS_DAEMON=off in its environment`);
  };
}
