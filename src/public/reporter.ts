/**
 * The agent-harness Vitest reporter (package entry `agent-harness/reporter`). The default export is the
 * reporter class, so `reporters: ['agent-harness/reporter']` works as well as an instance.
 */
export { AgentHarnessReporter, testCaseToReportInput, AGENT_HARNESS_REPORTER } from '../vitest/reporter.js';
export type { AgentHarnessReporterOptions, AgentHarnessReportFiles } from '../vitest/reporter.js';
export { buildConsistencyReport, caseName, engineFromName } from '../report/build.js';
export type { ReportInput } from '../report/build.js';
export { renderMarkdown, renderJunit, renderStepSummary, renderMatrix, xmlEscape } from '../report/render.js';
export {
  CONSISTENCY_REPORT_VERSION,
  ConsistencyReportSchema,
  ConsistencyTestSchema,
  ConsistencyRowSchema,
  ConsistencyCellSchema,
} from '../report/schema.js';
export type { ConsistencyReport, ConsistencyTest, ConsistencyRow, ConsistencyCell } from '../report/schema.js';
export { AgentHarnessReporter as default } from '../vitest/reporter.js';
