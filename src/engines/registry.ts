/**
 * The engine registry: the one list of engines. Each engine is one entry naming its id and how to load its two parts,
 * so nothing is loaded before it is used: the CLI lists engines without loading any, `translate` (its parser and error
 * patterns) and the scripted model server (its tool tables) load an engine's light `facts`, an attempt the full
 * `adapter` (config writers, TOML, agent options). Adding an engine is one folder `src/engines/<id>/` and one line
 * below (`docs/adding-an-engine.md`); `registerEngine` adds one at run time (a test's throwaway engine).
 *
 * This module stays light (no zod, no engine module): the CLI's entry imports it to name its engine commands.
 */
import { AgentHarnessError } from '../errors/index.js';
import type { EngineToolTable } from '../model/tool-table.js';
import { ENGINE_ID_PATTERN } from '../protocol/versions.js';
import type { EngineAdapter, EngineFacts, TranslationAdapter } from './engine.js';

/** One engine of the registry: its id and loaders of its parts (each loaded once, when first asked for). */
export interface EngineEntry {
  /** Engine id: 1-32 lower-case letters (it is part of every run id). */
  readonly id: string;
  /** The full adapter (`<id>/index.ts`). */
  readonly adapter: () => Promise<EngineAdapter>;
  /**
   * The engine's facts alone (`<id>/facts.ts`): what `translate` and the scripted model server need, without the rest
   * of the adapter. Absent: taken from the adapter (an engine registered at run time is usually small enough).
   */
  readonly facts?: () => Promise<EngineFacts>;
}

/**
 * The built-in engines, in display order. One line per engine; each import is a literal, so the compiler checks every
 * folder's exports and Vitest can resolve it (a computed path, `./${id}/index.js`, it cannot).
 */
// biome-ignore format: one line per engine
const BUILT_IN: readonly EngineEntry[] = [
  { id: 'codex', facts: async () => (await import('./codex/facts.js')).codexFacts, adapter: async () => (await import('./codex/index.js')).codexEngine },
  { id: 'claude', facts: async () => (await import('./claude/facts.js')).claudeFacts, adapter: async () => (await import('./claude/index.js')).claudeEngine },
  { id: 'gemini', facts: async () => (await import('./gemini/facts.js')).geminiFacts, adapter: async () => (await import('./gemini/index.js')).geminiEngine },
  { id: 'opencode', facts: async () => (await import('./opencode/facts.js')).opencodeFacts, adapter: async () => (await import('./opencode/index.js')).opencodeEngine },
  { id: 'copilot', facts: async () => (await import('./copilot/facts.js')).copilotFacts, adapter: async () => (await import('./copilot/index.js')).copilotEngine },
  { id: 'qwen', facts: async () => (await import('./qwen/facts.js')).qwenFacts, adapter: async () => (await import('./qwen/index.js')).qwenEngine },
  { id: 'iflow', facts: async () => (await import('./iflow/facts.js')).iflowFacts, adapter: async () => (await import('./iflow/index.js')).iflowEngine },
];

/** A registered engine and what of it was loaded (promises, so concurrent callers share one load). */
interface Registered {
  entry: EngineEntry;
  /** Registered at run time: its parser's outputs are checked against the protocol (checked-parser.ts). */
  untrusted?: true;
  adapter?: Promise<EngineAdapter>;
  facts?: Promise<EngineFacts>;
}

const registered = new Map<string, Registered>(BUILT_IN.map((entry) => [entry.id, { entry }]));

/**
 * Adds an engine for the rest of the process (or until the returned function removes it): the CLI, `translate`,
 * the providers, the Vitest fixtures and the scripted model server then know it as they know the built-in ones.
 * USAGE_ERROR for an id that is not 1-32 lower-case letters or that is already registered.
 */
export function registerEngine(entry: EngineEntry): () => void {
  if (!ENGINE_ID_PATTERN.test(entry.id)) {
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `Engine id ${JSON.stringify(entry.id)} is not 1-32 lower-case letters; choose an id like "myagent".`,
      { details: { engine: entry.id } },
    );
  }
  if (registered.has(entry.id)) {
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `Engine "${entry.id}" is registered already; unregister it first or choose another id.`,
      { details: { engine: entry.id } },
    );
  }
  const own: Registered = { entry, untrusted: true };
  registered.set(entry.id, own);
  return () => {
    if (registered.get(entry.id) === own) registered.delete(entry.id);
  };
}

/** The ids of every registered engine, in display order (built-in first, then registered at run time). */
export function engineIds(): string[] {
  return [...registered.keys()];
}

/** True when `id` is a registered engine. */
export function isEngineId(id: string): boolean {
  return registered.has(id);
}

/** The ids of the engines an attempt can run with (every registered engine has an adapter). */
export function availableEngines(): string[] {
  return engineIds();
}

/** What is wrong with an unknown engine id, naming the registered ones (also for config validation). */
export function unknownEngineMessage(id: unknown): string {
  return `Unknown engine ${JSON.stringify(id)}. Known engines: ${engineIds().join(', ')}.`;
}

/** The registration of `id`; ENGINE_UNKNOWN naming the registered engines otherwise. */
function registration(id: string): Registered {
  const found = registered.get(id);
  if (found) return found;
  throw new AgentHarnessError('ENGINE_UNKNOWN', unknownEngineMessage(id), { details: { engine: id } });
}

/** Checks that `id` is a registered engine (ENGINE_UNKNOWN otherwise) and returns it. */
export function requireEngineId(id: string): string {
  return registration(id).entry.id;
}

/** The full adapter of `id` (loaded once); ENGINE_UNKNOWN for an id no engine is registered under. */
export async function loadEngine(id: string): Promise<EngineAdapter> {
  const found = registration(id);
  found.adapter ??= found.entry.adapter().then((adapter) => (found.untrusted ? withCheckedParser(adapter) : adapter));
  return found.adapter;
}

/**
 * The facts of `id` (its `facts.ts`, or its adapter's when the entry names none), loaded once; ENGINE_UNKNOWN as
 * {@link loadEngine}.
 */
export async function loadEngineFacts(id: string): Promise<EngineFacts> {
  const found = registration(id);
  found.facts ??= (found.entry.facts ?? found.entry.adapter)().then((facts) =>
    found.untrusted ? withCheckedParser(facts) : facts,
  );
  return found.facts;
}

/** What translating recorded output of `id` needs, without its full adapter; ENGINE_UNKNOWN as {@link loadEngine}. */
export function loadTranslationAdapter(id: string): Promise<TranslationAdapter> {
  return loadEngineFacts(id);
}

/**
 * `adapter` whose parsers check each output against the protocol: for an engine registered at run time (the built-in
 * parsers are proven by their property tests, and are not checked per event).
 */
async function withCheckedParser<T extends TranslationAdapter>(adapter: T): Promise<T> {
  const { checkedParser } = await import('./checked-parser.js');
  return Object.assign(Object.create(Object.getPrototypeOf(adapter)), adapter, {
    createParser: () => checkedParser(adapter.createParser(), adapter.id),
  });
}

/** The tool table of `id` (how the scripted model server calls its tools); ENGINE_UNKNOWN as {@link loadEngine}. */
export async function loadToolTable(id: string): Promise<EngineToolTable> {
  return (await loadEngineFacts(id)).tools;
}

/** The tool tables of every registered engine, in display order: what a model server serves by default. */
export function loadToolTables(): Promise<EngineToolTable[]> {
  return Promise.all(engineIds().map(loadToolTable));
}

/** Throws ENGINE_CAPABILITY_UNAVAILABLE when the adapter lacks resume. */
export function requireResume(adapter: EngineAdapter): NonNullable<EngineAdapter['buildResumeArgs']> {
  if (!adapter.buildResumeArgs) {
    throw new AgentHarnessError(
      'ENGINE_CAPABILITY_UNAVAILABLE',
      `Engine "${adapter.id}" cannot resume a session (capability "resume" is unavailable).`,
      {
        details: { engine: adapter.id, capability: 'resume' },
      },
    );
  }
  return adapter.buildResumeArgs;
}
