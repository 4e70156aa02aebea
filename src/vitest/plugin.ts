/**
 * The `agentHarness()` Vite plugin for Vitest: validates the options, provides the config to tests
 * (`inject('agentHarness')`) and registers the {@link AgentHarnessReporter} once per Vitest instance.
 * Uses only `configureVitest` (works the same in Vitest 4 and 5; research note §3).
 */
import type { Vite, VitestPluginContext } from 'vitest/node';
// Loads Vitest's augmentation of Vite's `Plugin` (the `configureVitest` hook).
import type {} from 'vitest/config';
import { AGENT_HARNESS_REPORTER, AgentHarnessReporter } from './reporter.js';
import { parseAgentHarnessOptions, toAgentHarnessConfig, type AgentHarnessOptions } from './options.js';
import { openProgressHub, type ProgressHub } from './progress-channel.js';
import './types.js';

type ReporterEntry = unknown;

/** True when the resolved reporters list contains a blob reporter (a shard run: reports are built on merge). */
export function hasBlobReporter(reporters: readonly ReporterEntry[]): boolean {
  return reporters.some((r) => r === 'blob' || (Array.isArray(r) && r[0] === 'blob'));
}

/** True when an agent-harness reporter instance is already registered. */
export function hasAgentHarnessReporter(reporters: readonly ReporterEntry[]): boolean {
  return reporters.some(
    (r) =>
      typeof r === 'object' &&
      r !== null &&
      !Array.isArray(r) &&
      (r as Record<symbol, unknown>)[AGENT_HARNESS_REPORTER] === true,
  );
}

/** One progress hub per Vitest instance, shared by its projects. */
const hubs = new WeakMap<object, ProgressHub>();

function progressHubOf(vitest: VitestPluginContext['vitest']): ProgressHub {
  let hub = hubs.get(vitest);
  if (!hub) {
    const opened = openProgressHub();
    hub = opened;
    hubs.set(vitest, opened);
    (vitest as { onClose?: (fn: () => void) => void }).onClose?.(() => opened.close());
  }
  return hub;
}

/**
 * The plugin. Add it to `plugins` of the root config; inline projects need `extends: true` (Vitest 4) to get it.
 * Throws AgentHarnessError('CONFIG_INVALID') for bad options, at config time.
 */
export function agentHarness(options: AgentHarnessOptions = {}): Vite.Plugin {
  const resolved = parseAgentHarnessOptions(options);
  return {
    name: 'agent-harness',
    configureVitest({ project, vitest }: VitestPluginContext) {
      const reporters = vitest.config.reporters as unknown as ReporterEntry[];
      // A blob (shard) run reports on merge: no live progress to print, no hub.
      const blob = hasBlobReporter(reporters);
      const hub = blob ? null : progressHubOf(vitest);
      const config = { ...toAgentHarnessConfig(resolved, vitest.config.root), progressSocket: hub?.address ?? null };
      project.provide('agentHarness', config);
      if (!hub || hasAgentHarnessReporter(reporters)) return;
      reporters.push(
        new AgentHarnessReporter({
          reportDir: config.reportDir,
          progressHub: hub,
          ...(resolved.export ? { export: resolved.export } : {}),
          ...(resolved.gates ? { gates: resolved.gates } : {}),
        }),
      );
    },
  };
}
