/** agentHarness() options: defaults, resolution against the root, CONFIG_INVALID messages, plugin guards. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { AgentHarnessError } from '../../src/errors/index.js';
import { parseAgentHarnessOptions, toAgentHarnessConfig, DEFAULT_REPORT_DIR } from '../../src/vitest/options.js';
import { agentHarness, hasAgentHarnessReporter, hasBlobReporter } from '../../src/vitest/plugin.js';
import { AgentHarnessReporter } from '../../src/vitest/reporter.js';
import { scaled } from '../helpers/load-scaled.js';

function configError(input: unknown): AgentHarnessError {
  try {
    parseAgentHarnessOptions(input);
  } catch (error) {
    return error as AgentHarnessError;
  }
  throw new Error('expected CONFIG_INVALID');
}

describe('agentHarness options', () => {
  it('applies defaults and resolves paths against the Vitest root', () => {
    const options = parseAgentHarnessOptions({});
    expect(options).toEqual({ model: 'scripted', reportDir: DEFAULT_REPORT_DIR, engineVersions: 'warn' });
    const config = toAgentHarnessConfig(
      parseAgentHarnessOptions({
        runRoot: 'runs',
        skillRoots: ['skills'],
        engines: ['codex'],
        model: 'replay',
        timeoutMs: 5000,
      }),
      '/repo',
    );
    expect(config).toEqual({
      root: '/repo',
      runRoot: path.resolve('/repo/runs'),
      skillRoots: [path.resolve('/repo/skills')],
      engines: ['codex'],
      model: 'replay',
      upstream: null,
      reportDir: path.resolve('/repo', DEFAULT_REPORT_DIR),
      codexProfile: null,
      timeoutMs: 5000,
      engineVersions: 'warn',
      expose: null,
    });
    expect(structuredClone(config)).toEqual(config);
  });

  it('resolves expose entries against the root, keeping :ro; an empty path is left for the attempt to refuse', () => {
    const config = toAgentHarnessConfig(
      parseAgentHarnessOptions({ expose: ['data:ro', 'out:rw', 'plain', { path: 'obj', readOnly: true }, ':ro'] }),
      '/repo',
    );
    expect(config.expose).toEqual([
      `${path.resolve('/repo/data')}:ro`,
      path.resolve('/repo/out'),
      path.resolve('/repo/plain'),
      { path: path.resolve('/repo/obj'), readOnly: true },
      ':ro',
    ]);
  });

  it.for([
    [{ model: 'mocked' }, 'model', '"mocked"'],
    [{ upstream: 'ftp://example.test' }, 'upstream', '"ftp://example.test"'],
    [{ engines: ['codex', 'vim'] }, 'engines.1', '"vim"'],
    [{ timeoutMs: -5 }, 'timeoutMs', '-5'],
    [{ skillRoots: 'skills' }, 'skillRoots', '"skills"'],
    [{ reportDir: '' }, 'reportDir', '""'],
    [{ runroot: 'x' }, 'runroot', '"x"'],
    [{ timeoutMs: 1e12 }, 'timeoutMs', '1000000000000'],
  ] as const)('rejects %j naming %s', ([input, field, value]) => {
    const error = configError(input);
    expect(error).toBeInstanceOf(AgentHarnessError);
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(`option ${field} = ${value}`);
    expect(error.details.field).toBe(field);
  });

  it.for([
    [{ reportDir: 5 }, 'reportDir', '5'],
    [{ html: 'no' }, 'html', '"no"'],
    [{ stepSummary: 1 }, 'stepSummary', '1'],
    [{ export: { atif: true, xml: true } }, 'export', ''],
  ] as const)('the reporter refuses %j naming %s when it is made', ([input, field, value]) => {
    let error: unknown = null;
    try {
      new AgentHarnessReporter(input as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AgentHarnessError);
    expect((error as AgentHarnessError).code).toBe('CONFIG_INVALID');
    expect((error as Error).message).toContain(`AgentHarnessReporter option ${field}`);
    expect((error as Error).message).toContain(value);
  });

  it('the reporter takes null options as none', () => {
    expect(new AgentHarnessReporter(null as never).options).toEqual({});
  });

  it('throws at plugin creation for bad options', () => {
    expect(() => agentHarness({ model: 'nope' as never })).toThrow(/CONFIG_INVALID|option model/);
  });
});

describe('plugin reporter registration', () => {
  it('provides the config and registers the reporter once, never for blob runs', async () => {
    const plugin = agentHarness({ engines: ['codex'] }) as unknown as { configureVitest: (ctx: unknown) => void };
    const provided: Record<string, unknown> = {};
    const reporters: unknown[] = [['default', {}]];
    const closers: Array<() => void> = [];
    const ctx = {
      vitest: { config: { root: '/r', reporters }, onClose: (fn: () => void) => closers.push(fn) },
      project: {
        provide: (k: string, v: unknown) => {
          provided[k] = v;
        },
      },
    };
    plugin.configureVitest(ctx);
    plugin.configureVitest(ctx); // a second project
    const socket = (provided.agentHarness as { progressSocket: string }).progressSocket;
    expect(reporters.filter((r) => r instanceof AgentHarnessReporter)).toHaveLength(1);
    expect(provided.agentHarness).toMatchObject({
      root: '/r',
      engines: ['codex'],
      reportDir: path.resolve('/r', DEFAULT_REPORT_DIR),
    });
    const blob: unknown[] = [['blob', {}]];
    plugin.configureVitest({ ...ctx, vitest: { config: { root: '/r', reporters: blob } } });
    expect(blob).toHaveLength(1);
    expect(hasBlobReporter(['blob'])).toBe(true);
    expect(hasAgentHarnessReporter([new AgentHarnessReporter()])).toBe(true);
    expect(hasAgentHarnessReporter([['default', {}]])).toBe(false);
    // One progress hub for the Vitest instance, closed with it.
    expect(closers).toHaveLength(1);
    await vi.waitFor(() => expect(fs.existsSync(socket)).toBe(true), { timeout: scaled(1000) });
    for (const close of closers) close();
    expect(fs.existsSync(socket)).toBe(false);
  });
});
