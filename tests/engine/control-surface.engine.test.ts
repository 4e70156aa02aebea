/**
 * No control surface of the harness is left for an agent (issue 29): nothing it can reach — a TCP port, a Unix socket,
 * a variable naming an endpoint, a process — lets it start attempts or change isolation. On every engine whose CLI is
 * installed, a real attempt under the default isolation has the agent's shell run a probe
 * (tests/helpers/control-surface-probe.cjs) that searches from inside the namespaces and writes a JSON report; the
 * assertions are on that report. codex runs with its own sandbox off, so the probe sees what the harness leaves, not
 * what codex's seccomp filter hides (it refuses every TCP connect).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { test, turns } from '../../src/public/vitest.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { registryEngines } from '../helpers/engines.js';
import { WIRE_APIS } from '../../src/model/server.js';
import type { EngineId } from '../../src/protocol/index.js';
import { resolveExecutable } from '../../src/runtime/executables.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { expectCompleteAudit, expectFullIsolation } from '../helpers/audit.js';
import { scaled } from '../helpers/load-scaled.js';

const PROBE = fs.readFileSync(path.join(import.meta.dirname, '..', 'helpers', 'control-surface-probe.cjs'), 'utf8');

/** What the probe wrote (control-surface.json); see the probe's header. */
interface ControlSurfaceReport {
  error?: string;
  roots: string[];
  tcp: {
    scans: Array<{ host: string; open: number[]; outcomes: Record<string, number>; retried: number }>;
    listeners: Array<{ family: string; address: string; port: number; owner_pid: number | null; owner: string | null }>;
  };
  unix: {
    walk: { entries: number; truncated: boolean; harness_named_dirs: string[] };
    in_namespace: Array<{ name: string; listening: boolean; owner_pid: number | null; owner: string | null }>;
    tried: Array<{ socket: string; accepted: boolean; answer: string; answer_text: string; error: string | null }>;
    harness_named_still_there: string[];
    daemon_dirs: Array<{ dir: string; exists: boolean }>;
  };
  env: {
    harness: Record<string, string>;
    endpoints: Array<{
      variable: string;
      kind: 'url' | 'host:port' | 'socket' | 'fifo';
      host?: string;
      port?: number | null;
      path?: string;
    }>;
  };
  processes: {
    self: number;
    list: Array<{ pid: number; ppid: number; cmdline: string | null }>;
    namespaces: { net: string | null; pid: string | null };
  };
  http: Array<{ method: string; path: string; status: number | null; body: string }>;
}

/** The variables of the removed attempt daemon and its side paths: none may reach an agent. */
const REMOVED_CONTROL_VARIABLES = [
  'AGENT_HARNESS_DAEMON',
  'AGENT_HARNESS_DAEMON_DIR',
  'AGENT_HARNESS_DAEMON_IDLE_MS',
  'AGENT_HARNESS_NAMESPACE_INIT',
  'AGENT_HARNESS_COMPILE_CACHE',
];

/** The model server's routes that are not a wire API: all read-only. */
const HARNESS_ROUTES = ['GET /', 'HEAD /', 'GET /__harness/requests'];

/** How the server's route list names its attempt lanes. */
const LANE_ROUTES = 'any of these under /__attempt/<lane> (an attempt lane)';

/** Loopback as a URL or a host:port names it. */
const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]', '::1'];

/**
 * What the removed daemon answered to a request: a frame (`type u8` 1–6, `length u32be`, payload) whose length
 * matches, or anything that names agent-harness. `hex` is the first 64 bytes the socket sent.
 */
function isHarnessAnswer(hex: string, text: string): boolean {
  const bytes = Buffer.from(hex, 'hex');
  const framed =
    bytes.length >= 5 &&
    bytes[0]! >= 1 &&
    bytes[0]! <= 6 &&
    (bytes.readUInt32BE(1) === bytes.length - 5 || bytes[5] === 0x7b);
  return framed || /agent-harness|"served"|"running"|"key"/.test(text);
}

/** Why an engine cannot run here (its executable is missing), or null. */
function missingReason(engine: EngineId): string | null {
  try {
    resolveExecutable(engine, resolveHarnessPaths({ env: {}, projectRoot: process.cwd(), skillRoots: [] }));
    return null;
  } catch (error) {
    if (!isAgentHarnessError(error, 'ENGINE_EXECUTABLE_MISSING')) throw error;
    return `no ${engine} executable (the npm registry reachable here does not serve its CLI)`;
  }
}

/** The id of one of this process's namespaces (`net:[4026…]`). */
function hostNamespace(kind: 'net' | 'pid'): string {
  return fs.readlinkSync(`/proc/self/ns/${kind}`);
}

/**
 * The probe's turns: the probe, then calls that wait for its report. codex's exec_command returns after 10 s and
 * leaves the command running; the scan of 2 × 65,535 ports can take longer on a loaded machine, so the agent then
 * waits with the next calls (each up to 8 s) while the probe finishes. On the other engines the first call returns
 * when the probe is done, and each wait returns at once. The waits are numbered: gemini stops a turn that repeats
 * one tool call five times as a loop.
 */
const PROBE_TURNS = [
  turns.shell('node control-probe.cjs'),
  ...Array.from({ length: 8 }, (_, i) => turns.shell(`node control-probe.cjs wait ${i + 1}`)),
  turns.final('Probed the control surface.'),
];

/** The engine whose attempt tries every TCP port (codex: the cheapest to start); see the probe's `portsToTry`. */
const FULL_SCAN_ENGINE = 'codex';

describe.for(registryEngines())('%s: no control surface of the harness reachable from the agent', (engine) => {
  const missing = missingReason(engine);

  test('the agent reaches only the model port and no harness socket, variable or process', async ({
    model,
    agent,
    harness,
    skip,
  }) => {
    if (missing) skip(missing);
    const modelPort = Number(new URL(model.url).port);
    const { paths } = harness;
    const settings = {
      modelPort,
      hostUid: process.getuid?.() ?? 0,
      roots: [paths.runRoot, paths.dataDir, paths.agentCacheDir, paths.agentHome, paths.tmpDir, paths.npmPrefix],
      maxEntries: 500_000,
      // Every TCP port is tried on one engine: the ports the harness leaves do not depend on the engine, and the full
      // scan costs seconds of CPU. The others try the ports the listener table names, which must be the model's only.
      fullScan: engine === FULL_SCAN_ENGINE,
    };
    model.script(...PROBE_TURNS);
    const prompt = 'Probe the control surface.';
    const run = await agent.start(engine, {
      ...(engine === 'codex'
        ? { args: ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', prompt] }
        : { prompt }),
      timeoutMs: scaled(150_000),
      files: { 'control-probe.cjs': PROBE, 'control-probe.json': `${JSON.stringify(settings)}\n` },
    });
    const meta = expectCompleteAudit(run.audit);
    expectFullIsolation(meta, run.runDir);
    expect(meta.model.base_url).not.toBeNull();
    expect(Number(new URL(meta.model.base_url!).port)).toBe(modelPort);
    const reportFile = path.join(run.runDir, 'control-surface.json');
    expect(
      fs.existsSync(reportFile),
      `the agent's shell never finished the probe (${run.toolCalls.length} tool calls; completion ${JSON.stringify(run.completion)})`,
    ).toBe(true);
    const report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as ControlSurfaceReport;
    expect(report.error).toBeUndefined();
    expect(run.completion).toEqual({ state: 'completed', reason: 'done_marker' });

    // Inside the attempt's own namespaces, not the harness's.
    expect(report.processes.namespaces.net).toMatch(/^net:\[\d+\]$/);
    expect(report.processes.namespaces.net).not.toBe(hostNamespace('net'));
    expect(report.processes.namespaces.pid).toMatch(/^pid:\[\d+\]$/);
    expect(report.processes.namespaces.pid).not.toBe(hostNamespace('pid'));

    // TCP: every port of both loopbacks tried (on FULL_SCAN_ENGINE; elsewhere those the listener table names); only
    // the model port accepts, and only the namespace init (PID 1, which carries it to the model server) listens
    // anywhere. The init listens on ::1 too where the namespace has
    // it (`localhost` may resolve there), for the same port only.
    const [v4, v6] = report.tcp.scans;
    expect(v4).toMatchObject({ host: '127.0.0.1', open: [modelPort] });
    expect(v6?.host).toBe('::1');
    expect([[], [modelPort]]).toContainEqual(v6?.open);
    for (const scan of [v4!, v6!]) {
      // A port tried from its own ephemeral port connects to itself ("self"): nothing listens there. A host without
      // IPv6 has no ::1 at all: every connect there fails alike.
      const noLoopback =
        scan.host === '::1' &&
        Object.keys(scan.outcomes).length === 1 &&
        ['EADDRNOTAVAIL', 'ENETUNREACH', 'EAFNOSUPPORT'].includes(Object.keys(scan.outcomes)[0]!);
      const unexpected = Object.keys(scan.outcomes).filter(
        (outcome) => outcome !== 'ECONNREFUSED' && outcome !== 'self',
      );
      expect(
        noLoopback ? [] : unexpected,
        `how ${scan.host}'s connects ended: ${JSON.stringify(scan.outcomes)}`,
      ).toEqual([]);
      const tried = scan.open.length + Object.values(scan.outcomes).reduce((a, b) => a + b, 0);
      if (engine === FULL_SCAN_ENGINE) expect(tried).toBe(65_535);
      else expect(tried).toBeGreaterThanOrEqual(1_025);
    }
    // With the filesystem contained the agent lives in a nested user namespace and cannot read the init's descriptors
    // (/proc/1/fd is ptrace-guarded), so the listener's owner is unknown to it; every other process it sees is its
    // own, whose descriptors it reads: an owner it cannot name is the init.
    // The init may listen on ::1 too (same port): `localhost` can resolve there.
    const owner = (listener: (typeof report.tcp.listeners)[number] | undefined) =>
      listener?.owner_pid === undefined ? {} : { owner_pid: 1, owner: expect.stringContaining('namespace-init.cjs') };
    const v4Listeners = report.tcp.listeners.filter((listener) => listener.family === 'ipv4');
    const v6Listeners = report.tcp.listeners.filter((listener) => listener.family !== 'ipv4');
    expect(v4Listeners).toEqual([{ family: 'ipv4', address: '0100007F', port: modelPort, ...owner(v4Listeners[0]) }]);
    expect(v6Listeners.map((listener) => ({ ...listener, ...owner(listener) }))).toEqual(
      v6Listeners.map((listener) => ({
        family: 'ipv6',
        address: '00000000000000000000000001000000',
        port: modelPort,
        ...owner(listener),
      })),
    );
    expect(v6Listeners.length).toBeLessThanOrEqual(1);

    // Unix sockets: the whole search was done, no directory of the removed daemon exists, and no socket of the
    // harness's naming stays reachable (a concurrent attempt's init socket may be seen for the moment before its
    // init connects; it must be gone by the end). No socket anywhere answers the daemon's request as the daemon did.
    expect(report.unix.walk.truncated).toBe(false);
    expect(report.roots).toEqual(expect.arrayContaining(['/tmp', '/run', paths.runRoot, paths.agentHome]));
    expect(report.unix.daemon_dirs.filter((d) => d.exists)).toEqual([]);
    expect(report.unix.harness_named_still_there).toEqual([]);
    expect(report.unix.tried.filter((t) => t.accepted && isHarnessAnswer(t.answer, t.answer_text))).toEqual([]);
    // In the attempt's network namespace (abstract names are private to it) no socket is bound to a name of the
    // harness's, and the namespace init holds no named socket: its lifeline and model channel are inherited. The
    // name, not the directory: an engine's own socket in the attempt's TMPDIR (claude 2.1.332 listens on
    // `<TMPDIR>/cc-socks/<pid>.sock`) lies under the harness's data directory.
    expect(
      report.unix.in_namespace.filter(
        (socket) => /ah-ns-|agent-harness/.test(path.basename(socket.name)) || socket.owner_pid === 1,
      ),
    ).toEqual([]);

    // Variables: none of the removed control variables; every endpoint a variable names is the model port (the
    // engine's base URL), and none is a socket or a FIFO.
    expect(Object.keys(report.env.harness).filter((name) => REMOVED_CONTROL_VARIABLES.includes(name))).toEqual([]);
    // A socket the engine itself listens on inside the namespace (claude 2.1.332 names its own messaging socket in
    // CLAUDE_CODE_MESSAGING_SOCKET for its shell) is the engine's, like its ports would be; the processes check below
    // proves every process but the init descends from the engine.
    const enginesOwn = new Set(
      report.unix.in_namespace
        .filter((socket) => socket.listening && socket.owner_pid !== null && socket.owner_pid !== 1)
        .map((socket) => socket.name),
    );
    expect(
      report.env.endpoints.filter((e) => e.kind === 'fifo' || (e.kind === 'socket' && !enginesOwn.has(e.path ?? ''))),
    ).toEqual([]);
    const loopbackEndpoints = report.env.endpoints.filter(
      (e) => (e.kind === 'url' || e.kind === 'host:port') && LOOPBACK.includes(e.host!),
    );
    expect(loopbackEndpoints.filter((e) => e.port !== modelPort)).toEqual([]);
    expect(
      report.env.endpoints.filter(
        (e) => e.variable.startsWith('AGENT_HARNESS_') && !(LOOPBACK.includes(e.host ?? '') && e.port === modelPort),
      ),
    ).toEqual([]);

    // Processes: PID 1 is the namespace init, every other process descends from inside (a process put in from
    // outside would show parent 0), and none is the harness's (this Vitest worker, the CLI).
    const processes = report.processes.list;
    expect(processes.find((p) => p.pid === 1)?.cmdline).toContain('namespace-init.cjs');
    expect(processes.filter((p) => p.ppid === 0).map((p) => p.pid)).toEqual([1]);
    expect(processes.map((p) => p.pid)).toContain(report.processes.self);
    expect(processes.filter((p) => /vitest|tinypool|bin\/agent-harness/.test(p.cmdline ?? ''))).toEqual([]);

    // The model port's HTTP surface: the wire APIs and three read-only routes; anything else is a 404.
    const answer = (method: string, where: string) => report.http.find((r) => r.method === method && r.path === where);
    expect(answer('GET', '/')).toMatchObject({ status: 200, body: 'agent-harness scripted model\n' });
    expect(answer('HEAD', '/')).toMatchObject({ status: 200, body: '' });
    expect(answer('GET', '/__harness/requests')).toMatchObject({ status: 200, body: expect.stringMatching(/^\[/) });
    const others = report.http.filter((r) => !HARNESS_ROUTES.includes(`${r.method} ${r.path}`));
    expect(others.length).toBeGreaterThan(0);
    expect(others.filter((r) => r.status !== 404)).toEqual([]);
    const served = /; served: (.*)$/
      .exec((JSON.parse(answer('POST', '/no-such-route')!.body) as { error: { message: string } }).error.message)?.[1]
      ?.split(', ');
    const wirePaths = WIRE_APIS.flatMap((wire) => wire.paths);
    // Beside them, the same routes under an attempt lane (`/__attempt/<key>/…`: an attempt's own script, by a key
    // no route lists).
    expect(served?.filter((route) => !wirePaths.includes(route))).toEqual([...HARNESS_ROUTES, LANE_ROUTES]);
    expect(wirePaths.every((route) => route.startsWith('POST /') && !route.includes('__harness'))).toBe(true);
    expect(model.egress).toEqual([]);
  });
});
