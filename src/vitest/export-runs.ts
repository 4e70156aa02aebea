/**
 * The plugin's per-test export (`agentHarness({ export: { atif: true, otlp: true } })`): at the end of the run the
 * reporter writes each attempt a test made as `atif.N.json` and/or `otlp.N.json` beside the attempt's audit files
 * (`<run_dir>/.audit/`). The OTLP spans carry the test's own verdict as a second `gen_ai.evaluation.result`, and are
 * sent to `OTEL_EXPORTER_OTLP_ENDPOINT` when it is set. A failed export is a warning on stderr, never a failed run.
 */
import path from 'node:path';
import type { TestCase, TestModule } from 'vitest/node';
import { readRunRecord } from '../runtime/run-record.js';
import { readAgentHarnessMeta } from './types.js';

/** Which formats to export per test. */
export interface ExportOptions {
  atif?: boolean;
  otlp?: boolean;
}

/** What {@link exportTestRuns} wrote. */
export interface ExportedFiles {
  files: string[];
  warnings: string[];
}

/** Exports the attempts of every test case of `modules` that ran an agent. */
export async function exportTestRuns(
  modules: ReadonlyArray<TestModule>,
  options: ExportOptions,
): Promise<ExportedFiles> {
  const out: ExportedFiles = { files: [], warnings: [] };
  const formats = (['atif', 'otlp'] as const).filter((f) => options[f]);
  if (formats.length === 0) return out;
  const { exportAttempt, exportFileName, writeExport } = await import('../export/export-attempt.js');
  const done = new Set<string>();
  for (const mod of modules)
    for (const tc of mod.children.allTests()) {
      const meta = readAgentHarnessMeta(tc.meta());
      for (const record of meta?.attempts ?? []) {
        const key = `${record.auditDir}#${record.attempt}`;
        if (done.has(key)) continue;
        done.add(key);
        const run = readRunRecord(path.dirname(record.auditDir));
        if (!run) {
          out.warnings.push(`no run record beside ${record.auditDir}; attempt ${record.attempt} not exported`);
          continue;
        }
        for (const format of formats) {
          try {
            const exported = await exportAttempt(run, record.attempt, format, {
              evaluations: [testVerdict(tc)],
            });
            const file = path.join(record.auditDir, exportFileName(format, record.attempt));
            await writeExport(file, exported.text);
            out.files.push(file);
          } catch (error) {
            out.warnings.push(
              `${format} export of ${run.handle} attempt ${record.attempt} failed: ${(error as Error).message}`,
            );
          }
        }
      }
    }
  return out;
}

function testVerdict(tc: TestCase): { name: string; label: string; score: number; explanation: string } {
  const result = tc.result();
  const firstError = (result.errors ?? [])[0]?.message;
  return {
    name: 'vitest',
    label: result.state,
    score: result.state === 'passed' ? 1 : 0,
    explanation: firstError ? `${tc.fullName}: ${firstError}` : tc.fullName,
  };
}
