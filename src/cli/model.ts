/**
 * `agent-harness model serve [--script F] [--port P] [--log F] [--cassette F [--lenient] [--pace X]]`: the scripted
 * model server on 127.0.0.1, standalone, until interrupted; with `--cassette`, it answers from a cassette (any client,
 * offline) and says at the end what was served, missed and left unused.
 */
import path from 'node:path';
import type { Command } from 'commander';
import type { CassetteReport } from '../cassette/session.js';
import { parsePace, parsePort } from './options.js';

/** Options of `model serve`. */
interface ServeOptions {
  script?: string;
  port?: number;
  log?: string;
  cassette?: string;
  lenient?: boolean;
  pace?: number;
}

/** The lines printed when a served cassette stops: the counts, then each diagnostic. */
function cassetteSummary(report: CassetteReport): string {
  const counts = `${report.exact} exact, ${report.divergent} divergent, ${report.missed} missed, ${report.unused} unused of ${report.interactions}`;
  const lines = report.diagnostics.map((d) => `${d.level} ${d.code}: ${d.message}`);
  return `agent-harness: cassette ${report.file}: ${counts}\n${lines.map((line) => `${line}\n`).join('')}`;
}

/** Registers `model serve`. */
export function registerModel(program: Command): void {
  const model = program.command('model').description('the scripted model server');
  model
    .command('serve')
    .description('serve the scripted model on 127.0.0.1 until Ctrl-C (requests: GET /__harness/requests)')
    .option('--script <file>', 'JSON model script (default: a short text reply to every turn)')
    .option(
      '--port <port>',
      'port on 127.0.0.1 (default or 0: any free port; the listening line says which)',
      parsePort,
    )
    .option('--log <file>', 'append every request as a JSON line to this file')
    .option(
      '--cassette <file>',
      'answer from this cassette, offline (each recorded interaction once; docs/cassettes.md)',
    )
    .option('--lenient', 'with --cassette: a request the cassette lacks is answered by the script, not refused')
    .option(
      '--pace <factor>',
      'with --cassette: serve at the recorded pace times FACTOR (default 0: at once)',
      parsePace,
    )
    .action(async (options: ServeOptions) => {
      const { serveModel } = await import('../model/serve.js');
      const { loadCassette, openCassette } = await import('../cassette/index.js');
      const file = options.cassette ? path.resolve(options.cassette) : null;
      const cassette = file
        ? openCassette({
            mode: 'replay',
            file,
            cassette: loadCassette(file),
            strict: !options.lenient,
            pace: options.pace ?? 0,
            hostEnv: {},
          })
        : null;
      const { loadToolTables } = await import('../engines/registry.js');
      const handle = await serveModel({
        tools: await loadToolTables(),
        ...(options.script ? { scriptPath: options.script } : {}),
        ...(options.port ? { port: options.port } : {}),
        ...(options.log ? { logFile: options.log } : {}),
        ...(cassette ? { intercept: cassette.intercept } : {}),
      });
      await handle.closed;
      if (cassette) process.stderr.write(cassetteSummary(await cassette.finish()));
    });
}
