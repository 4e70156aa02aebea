/**
 * codex over the Agent Client Protocol, through Zed's adapter `@zed-industries/codex-acp` (pinned 0.16.0, a
 * devDependency like the CLI). The adapter is a native binary in its platform package
 * (`@zed-industries/codex-acp-linux-x64/bin/codex-acp`) that embeds codex itself (codex-rs 0.137.0, not the pinned
 * `@openai/codex` 0.169): the harness starts that binary directly (the package's `bin/codex-acp.js` launcher runs it
 * with `spawnSync`, so a signal to the launcher would leave the binary running).
 *
 * It reads `$CODEX_HOME/config.toml` (the prepared env's `CODEX_HOME`) but takes no `--profile`, and its codex
 * predates the harness's profile files (`<profile>.config.toml`): the harness profile's keys are given as `-c`
 * overrides instead, with the prepared leading `-c` overrides (the scripted model's base URL, the run dir's trust).
 * Measured facts: docs/acp.md.
 */
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { AgentHarnessError } from '../../errors/index.js';
import { MAX_CONFIG_BYTES, readInputBytesSync } from '../../runtime/bounded-input.js';
import type { AcpCommand, AcpLaunchContext, AcpSupport } from '../engine.js';
import { acpAdapterMissing, adapterFile, installedPackageDir } from '../acp/adapter-package.js';
import { CODEX_SCRIPTED_MODEL } from './config.js';

/** The adapter's npm package. */
export const CODEX_ACP_PACKAGE = '@zed-industries/codex-acp';
/** Its bin. */
export const CODEX_ACP_BIN = 'codex-acp';

/** The platform packages of the adapter, by `process.platform`/`process.arch`, and the binary in each. */
const PLATFORM_PACKAGES: Record<string, string> = {
  'linux/x64': '@zed-industries/codex-acp-linux-x64',
  'linux/arm64': '@zed-industries/codex-acp-linux-arm64',
  'darwin/x64': '@zed-industries/codex-acp-darwin-x64',
  'darwin/arm64': '@zed-industries/codex-acp-darwin-arm64',
};

/** The adapter's native binary for this platform; ENGINE_CAPABILITY_UNAVAILABLE naming the package when missing. */
export function codexAcpBinary(): string {
  const launcherPackage = installedPackageDir(CODEX_ACP_PACKAGE);
  if (launcherPackage === null) throw acpAdapterMissing('codex', CODEX_ACP_PACKAGE, 'the package is not installed');
  const platformPackage = PLATFORM_PACKAGES[`${process.platform}/${process.arch}`];
  if (!platformPackage)
    throw acpAdapterMissing('codex', CODEX_ACP_PACKAGE, `it has no binary for ${process.platform}/${process.arch}`);
  // The platform package is an optional dependency of the launcher package: installed next to it or inside it.
  return adapterFile('codex', platformPackage, path.join('bin', CODEX_ACP_BIN), launcherPackage);
}

/** A config value as the right-hand side of codex's `-c key=value` (parsed as TOML). */
function tomlValue(value: unknown): string | null {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    const items = value.map(tomlValue);
    return items.every((item) => item !== null) ? `[${items.join(', ')}]` : null;
  }
  return null;
}

/** `-c key=value` pairs for every leaf of a parsed TOML table (nested tables as dotted keys). */
function overridesOf(table: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(table).flatMap(([key, value]) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      return overridesOf(value as Record<string, unknown>, `${prefix}${key}.`);
    const text = tomlValue(value);
    return text === null ? [] : ['-c', `${prefix}${key}=${text}`];
  });
}

/**
 * What the adapter's codex changes in the harness profile:
 *
 * - `sandbox_mode = "danger-full-access"`: codex 0.137's `workspace-write` sandbox needs bubblewrap (a system `bwrap`
 *   on PATH; the adapter bundles none), and without it every shell command panics ("bubblewrap is unavailable"); the
 *   legacy Landlock switch (`features.use_legacy_landlock`) refuses the profile's permissions too. The attempt's own
 *   isolation (namespaces, the agent's mount plan) is what contains it.
 * - `approval_policy = "untrusted"`: over ACP the client decides, so codex asks (`session/request_permission`) before
 *   every command outside its known-safe list instead of never asking.
 * - `features.unified_exec = false`: codex's unified exec (the `exec_command` tool) keeps a command running across
 *   turns, so `session/cancel` in the middle of one answered `cancelled` and left it running until `session/close`;
 *   with the classic shell tool (`shell_command`) the cancel kills it, as the native transport's end does.
 * - the scripted model slug `gpt-6-sol` becomes `gpt-5.5`: codex 0.137 does not know the newer slug and says so in
 *   the session's first message ("Model metadata for `gpt-6-sol` not found"), which would be part of the reply.
 */
export const CODEX_ACP_PROFILE: Readonly<Record<string, string | boolean>> = {
  sandbox_mode: 'danger-full-access',
  approval_policy: 'untrusted',
  'features.unified_exec': false,
};
/** The scripted model's slug for the adapter's codex (one in its bundled model list). */
export const CODEX_ACP_SCRIPTED_MODEL = 'gpt-5.5';

/** The harness profile (`configInjection.config_path`, written by `prepare`) as `-c` overrides, for the adapter. */
function profileOverrides(ctx: AcpLaunchContext): string[] {
  const profilePath = ctx.prepared.configInjection?.config_path;
  if (!profilePath) return [];
  try {
    const profile = parseToml(
      readInputBytesSync(profilePath, { what: 'codex profile', maxBytes: MAX_CONFIG_BYTES }).toString('utf8'),
    ) as Record<string, unknown>;
    if (profile.model === CODEX_SCRIPTED_MODEL) profile.model = CODEX_ACP_SCRIPTED_MODEL;
    return overridesOf({ ...profile, ...CODEX_ACP_PROFILE });
  } catch (error) {
    throw new AgentHarnessError(
      'ENGINE_CONFIG_INJECTION_FAILED',
      `Could not read the codex profile ${profilePath} for codex-acp: ${(error as Error).message}`,
      { cause: error, details: { config_path: profilePath } },
    );
  }
}

/** The prepared leading arguments without `--profile NAME` (codex-acp takes `-c` only). */
function leadingOverrides(leadingArgs: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < leadingArgs.length; i++) {
    if (leadingArgs[i] === '--profile') i++;
    else out.push(leadingArgs[i]!);
  }
  return out;
}

function codexAcpCommand(ctx: AcpLaunchContext): AcpCommand {
  const file = codexAcpBinary();
  return {
    file,
    args: [...profileOverrides(ctx), ...leadingOverrides(ctx.prepared.leadingArgs)],
    env: {},
  };
}

/** codex's ACP support: the pinned adapter's native binary with the managed config. */
export const acp: AcpSupport = {
  via: { package: CODEX_ACP_PACKAGE, bin: CODEX_ACP_BIN },
  command: codexAcpCommand,
  installed: () => void codexAcpBinary(),
  // codex-acp does not exit when its stdin closes (still running 20 s after an empty stdin).
  staysAfterStdinCloses: true,
};
