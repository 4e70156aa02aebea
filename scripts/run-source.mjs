// Runs the agent-harness command from the TypeScript sources (through tsx), with no build: `npm run cli -- <args>`.
// Stack traces point into src/, and a debugger can stop in them.
import { tsImport } from 'tsx/esm/api';

const { runCli } = await tsImport('../src/cli/main.ts', import.meta.url);
process.exitCode = await runCli(process.argv.slice(2));
