/**
 * `agent-harness model serve [--script F] [--port P] [--log F]`: the scripted model server on 127.0.0.1,
 * standalone, until interrupted.
 */
import type { Command } from 'commander';
import { parsePositiveInt } from './options.js';

/** Registers `model serve`. */
export function registerModel(program: Command): void {
  const model = program.command('model').description('the scripted model server');
  model
    .command('serve')
    .description('serve the scripted model on 127.0.0.1 until Ctrl-C (requests: GET /__harness/requests)')
    .option('--script <file>', 'JSON model script (default: a short text reply to every turn)')
    .option('--port <port>', 'port (default: an ephemeral one)', parsePositiveInt('--port'))
    .option('--log <file>', 'append every request as a JSON line to this file')
    .action(async (options: { script?: string; port?: number; log?: string }) => {
      const { serveModel } = await import('../model/serve.js');
      const handle = await serveModel({
        ...(options.script ? { scriptPath: options.script } : {}),
        ...(options.port ? { port: options.port } : {}),
        ...(options.log ? { logFile: options.log } : {}),
      });
      await handle.closed;
    });
}
