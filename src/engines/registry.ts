/**
 * The engine registry: the one list of engines. Each engine is one entry naming its id and how to load its parts,
 * so nothing is loaded before it is used: the CLI lists engines without loading any, `translate` loads one engine's
 * parser and error patterns (`translation`), the scripted model server its tool tables (`tools`), an attempt the full
 * adapter (`adapter`: config writers, TOML, agent options). Adding an engine is one folder `src/engines/<id>/` and one
 * line below (`docs/adding-an-engine.md`); `registerEngine` adds one at run time (a test's throwaway engine).
 *
 * This module stays light (no zod, no engine module): the CLI's entry imports it to name its engine commands.
 */
import { AgentHarnessError } from '../errors/index.js';
import type { EngineToolTable } from '../model/tool-table.js';
import { ENGINE_ID_PATTERN } from '../protocol/versions.js';
import type { EngineAdapter, TranslationAdapter } from './engine.js';

/** One engine of the registry: its id and loaders of its parts (each loaded once, when first asked for). */
export interface EngineEntry {
  /** Engine id: 1-32 lower-case letters (it is part of every run id). */
  readonly id: string;
  /** The full adapter (`<id>/index.ts`). */
  readonly adapter: () => Promise<EngineAdapter>;
  /** What translating recorded output needs, without the rest of the adapter (`<id>/translation.ts`). */
  readonly translation: () => Promise<TranslationAdapter>;
  /** How the scripted model server calls the engine's tools (`<id>/tools.ts`); the adapter's `tools`. */
  readonly tools: () => Promise<EngineToolTable>;
}

/**
 * The built-in engines, in display order. One line per engine; each import is a literal, so the compiler checks every
 * folder's exports and Vitest can resolve it (a computed path, `./${id}/index.js`, it cannot).
 */
// biome-ignore format: one line per engine
const BUILT_IN: readonly EngineEntry[] = [
  { id: 'codex', adapter: async () => (await import('./codex/index.js')).codexEngine, translation: async () => (await import('./codex/translation.js')).codexTranslation, tools: async () => (await import('./codex/tools.js')).codexTools },
  { id: 'claude', adapter: async () => (await import('./claude/index.js')).claudeEngine, translation: async () => (await import('./claude/translation.js')).claudeTranslation, tools: async () => (await import('./claude/tools.js')).claudeTools },
  { id: 'gemini', adapter: async () => (await import('./gemini/index.js')).geminiEngine, translation: async () => (await import('./gemini/translation.js')).geminiTranslation, tools: async () => (await import('./gemini/tools.js')).geminiTools },
  { id: 'opencode', adapter: async () => (await import('./opencode/index.js')).opencodeEngine, translation: async () => (await import('./opencode/translation.js')).opencodeTranslation, tools: async () => (await import('./opencode/tools.js')).opencodeTools },
  { id: 'qwen', adapter: async () => (await import('./qwen/index.js')).qwenEngine, translation: async () => (await import('./qwen/translation.js')).qwenTranslation, tools: async () => (await import('./qwen/tools.js')).qwenTools },
  { id: 'iflow', adapter: async () => (await import('./iflow/index.js')).iflowEngine, translation: async () => (await import('./iflow/translation.js')).iflowTranslation, tools: async () => (await import('./iflow/tools.js')).iflowTools },
];

/** A registered engine and what of it was loaded (promises, so concurrent callers share one load). */
interface Registered {
  entry: EngineEntry;
  /** Registered at run time: its parser's outputs are checked against the protocol (checked-parser.ts). */
  untrusted?: true;
  adapter?: Promise<EngineAdapter>;
  translation?: Promise<TranslationAdapter>;
  tools?: Promise<EngineToolTable>;
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

/** What translating recorded output of `id` needs, without its full adapter; ENGINE_UNKNOWN as {@link loadEngine}. */
export async function loadTranslationAdapter(id: string): Promise<TranslationAdapter> {
  const found = registration(id);
  found.translation ??= found.entry
    .translation()
    .then((adapter) => (found.untrusted ? withCheckedParser(adapter) : adapter));
  return found.translation;
}

/**
 * `adapter` whose parsers check each output against the protocol: for an engine registered at run time (the built-in
 * parsers are proven by their property tests, and are not checked per event).
 */
async function withCheckedParser<T extends TranslationAdapter>(adapter: T): Promise<T> {
  const { checkedParser } = await import('../translate/checked-parser.js');
  return Object.assign(Object.create(Object.getPrototypeOf(adapter)), adapter, {
    createParser: () => checkedParser(adapter.createParser(), adapter.id),
  });
}

/** The tool table of `id` (how the scripted model server calls its tools); ENGINE_UNKNOWN as {@link loadEngine}. */
export async function loadToolTable(id: string): Promise<EngineToolTable> {
  const found = registration(id);
  found.tools ??= found.entry.tools();
  return found.tools;
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
