/**
 * `agent-harness export --format atif|otlp <run> [--attempt N] [--out FILE]`: a recorded attempt as an ATIF v1.7
 * trajectory or as OpenTelemetry GenAI spans (OTLP/JSON), derived from its audit; with `--format otlp` and
 * `OTEL_EXPORTER_OTLP_ENDPOINT` set, the spans are also sent there. The document goes to stdout, or to `--out`.
 */
import type { Command } from 'commander';
import { AgentHarnessError } from '../errors/index.js';
import type { ExportFormat } from '../export/export-attempt.js';
import { resolveHarnessPaths } from '../runtime/paths.js';
import { parsePositiveInt } from './options.js';
import type { CliStreams } from './output.js';

interface ExportOptions {
  format?: string;
  attempt?: number;
  out?: string;
}

function parseFormat(value: string | undefined): ExportFormat {
  if (value === 'atif' || value === 'otlp') return value;
  throw new AgentHarnessError(
    'USAGE_ERROR',
    value === undefined
      ? 'export needs --format atif (an ATIF v1.7 trajectory) or --format otlp (OpenTelemetry spans as OTLP/JSON).'
      : `--format must be "atif" or "otlp", not ${JSON.stringify(value)}.`,
  );
}

/** Runs `export`; returns the exit status. */
export async function exportCommand(streams: CliStreams, selector: string, options: ExportOptions): Promise<number> {
  const format = parseFormat(options.format);
  const [{ findRun }, { exportAttempt, writeExport }] = await Promise.all([
    import('../core/session.js'),
    import('../export/export-attempt.js'),
  ]);
  const run = await findRun(
    resolveHarnessPaths(),
    { selector },
    { onUnsaved: (message) => streams.stderr.write(`agent-harness: warning: ${message}\n`) },
  );
  const attempt = options.attempt ?? run.attempts;
  if (attempt < 1) throw new AgentHarnessError('RUN_NOT_FOUND', `Run ${run.run_id} has no attempt yet.`);
  if (attempt > run.attempts)
    throw new AgentHarnessError(
      'RUN_NOT_FOUND',
      `Run ${run.handle} has ${run.attempts} attempt${run.attempts === 1 ? '' : 's'}, not ${attempt}.`,
      { details: { attempt, attempts: run.attempts } },
    );
  const exported = await exportAttempt(run, attempt, format);
  if (exported.sent > 0) streams.stderr.write(`agent-harness: sent ${exported.sent} spans to ${exported.endpoint}\n`);
  if (options.out) {
    await writeExport(options.out, exported.text);
    streams.stderr.write(`agent-harness: wrote ${options.out}\n`);
  } else streams.stdout.write(exported.text);
  return 0;
}

/** Registers `export`. */
export function registerExport(program: Command, streams: CliStreams, setExit: (code: number) => void): void {
  program
    .command('export')
    .description('write a recorded attempt as an ATIF trajectory or as OpenTelemetry GenAI spans (OTLP/JSON)')
    .argument('<run>', 'run selector: handle (or a unique prefix of 4+ digits), run id or run directory')
    .option('--format <format>', 'atif: ATIF v1.7 trajectory (Harbor RFC 0001); otlp: OpenTelemetry spans as OTLP/JSON')
    .option('--attempt <n>', 'attempt of the run (default: the last)', parsePositiveInt('--attempt'))
    .option('--out <file>', 'write the document to this file instead of stdout')
    .addHelpText(
      'after',
      `
What you get:
  atif   one trajectory per attempt: a user step (the prompt or the resume's reply), then agent steps with
         message, reasoning_content, tool_calls {tool_call_id, function_name, arguments}, observation.results
         (each tool's output, status and exit code) and metrics (tokens); final_metrics holds the totals and the
         verdict. Checked against ATIF v1.7 before it is written.
  otlp   an OTLP/JSON ExportTraceServiceRequest: an "invoke_agent <engine>" span for the attempt, an
         "execute_tool <name>" span per tool call, a "skill <name>" span where a skill was used, and a
         gen_ai.evaluation.result event with the verdict. With OTEL_EXPORTER_OTLP_ENDPOINT set (e.g.
         http://127.0.0.1:4318), the spans are also sent there over OTLP/HTTP.

Examples:
  agent-harness export --format atif 3f9a01bc > trajectory.json
  agent-harness export --format atif 3f9a01bc --attempt 1 --out runs/3f9a01bc.atif.json
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 agent-harness export --format otlp 3f9a01bc --out spans.json

See docs/export.md.`,
    )
    .action(async (run: string, options: ExportOptions) => {
      setExit(await exportCommand(streams, run, options));
    });
}
