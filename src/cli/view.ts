/**
 * `agent-harness view [--port P] [--root DIR]`: the HTML report's UI served on 127.0.0.1 over a run root, with the
 * JSON API (`/api/v1/runs`…) and a live tail of running attempts (docs/report.md). Prints its URL (with the token
 * every request must carry) and serves until SIGINT or SIGTERM.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AgentHarnessError } from '../errors/index.js';
import { resolveHarnessPaths } from '../runtime/paths.js';
import { parsePort } from './options.js';
import type { CliStreams } from './output.js';

interface ViewOptions {
  port?: string;
  root?: string;
  /** `--report FILE`: a test run's consistency.json whose trial statistics the page shows. */
  report?: string;
}

/** The statistics section of `--report FILE` (a USAGE_ERROR naming the file when it cannot be read as a report). */
async function statisticsOf(file: string) {
  const { ConsistencyReportSchema } = await import('../report/schema.js');
  let report: unknown;
  try {
    report = JSON.parse(fs.readFileSync(path.resolve(file), 'utf8'));
  } catch (error) {
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `--report ${JSON.stringify(file)} could not be read as JSON (${(error as Error).message}); give a consistency.json a Vitest run wrote.`,
    );
  }
  const parsed = ConsistencyReportSchema.safeParse(report);
  if (!parsed.success)
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `--report ${JSON.stringify(file)} is not a consistency report (${parsed.error.issues[0]?.message ?? 'invalid'}); give a consistency.json a Vitest run wrote.`,
    );
  return parsed.data.statistics;
}

/** Runs `view` until a signal; returns the exit status. */
export async function viewCommand(streams: CliStreams, options: ViewOptions): Promise<number> {
  const port = options.port === undefined ? 0 : parsePort(options.port);
  const runRoot = options.root ? path.resolve(options.root) : resolveHarnessPaths().runRoot;
  // A --root given by hand that is no directory (a typo, a file) would serve an empty list with no word why.
  if (options.root !== undefined && !fs.statSync(runRoot, { throwIfNoEntry: false })?.isDirectory())
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `--root ${JSON.stringify(options.root)} (${runRoot}) is not a directory; give a run root (the directory holding index.jsonl and the run directories).`,
    );
  const statistics = options.report !== undefined ? await statisticsOf(options.report) : undefined;
  const { startViewServer } = await import('../report/view-server.js');
  const server = await startViewServer({ runRoot, port, ...(statistics ? { statistics } : {}) });
  streams.stdout.write(`${server.url}\n`);
  streams.stderr.write(`agent-harness view: serving ${runRoot} on 127.0.0.1:${server.port} until Ctrl-C\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  return 0;
}

/** Registers `view`. */
export function registerView(program: Command, streams: CliStreams, setExit: (code: number) => void): void {
  program
    .command('view')
    .description('serve the HTML report of the runs on 127.0.0.1, with a JSON API and a live tail of running attempts')
    .option('--port <port>', 'port to listen on (default: any free port)')
    .option('--root <dir>', 'run root to serve (default: the run root, AGENT_HARNESS_RUN_ROOT)')
    .option('--report <file>', "show the trial statistics of a test run's consistency.json (the Trials section)")
    .addHelpText(
      'after',
      `
Prints the URL to open; it holds a random token, and a request without it gets 403. Only 127.0.0.1 listens.
The API: GET /api/v1/runs, /api/v1/runs/<handle>, /api/v1/runs/<handle>/attempts/<n>, …/events (FCMP),
…/tail (server-sent events of a running attempt), /api/v1/statistics (the --report's trials). See docs/report.md.`,
    )
    .action(async (options: ViewOptions) => {
      setExit(await viewCommand(streams, options));
    });
}
