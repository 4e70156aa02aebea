/**
 * The vendor SDKs (`openai`, `@anthropic-ai/sdk`) are optional peer dependencies: nothing imports them until an
 * HTTP caller is created, so `agent-harness` and its other entries load without them. A missing one is
 * DEPENDENCY_MISSING naming the package and the command that installs it.
 */
import type AnthropicClient from '@anthropic-ai/sdk';
import type OpenAIClient from 'openai';
import { AgentHarnessError } from '../errors/index.js';
import type { VendorErrorClasses } from './vendor-error-classes.js';

/** The `openai` package's default export (the client class with its error classes). */
export type OpenAiSdk = typeof OpenAIClient;
/** The `@anthropic-ai/sdk` package's default export (the client class with its error classes). */
export type AnthropicSdk = typeof AnthropicClient;

const loading = new Map<string, Promise<unknown>>();

/** Imports `name` once per process; a failed import is DEPENDENCY_MISSING and is tried again on the next call. */
function loadOptionalPeer<T>(name: string, load: () => Promise<{ default: T }>): Promise<T> {
  let pending = loading.get(name) as Promise<T> | undefined;
  if (!pending) {
    pending = load().then(
      (module) => module.default,
      (cause: unknown) => {
        loading.delete(name);
        const reason = cause instanceof Error ? cause.message : String(cause);
        throw new AgentHarnessError(
          'DEPENDENCY_MISSING',
          `The optional peer dependency ${name} could not be loaded (${reason}); the HTTP caller needs it. Install it in your project: npm install ${name}`,
          { cause, details: { package: name, install: `npm install ${name}` } },
        );
      },
    );
    loading.set(name, pending);
  }
  return pending;
}

/** Loads the `openai` package (DEPENDENCY_MISSING when it is not installed). */
export function loadOpenAiSdk(): Promise<OpenAiSdk> {
  return loadOptionalPeer('openai', () => import('openai'));
}

/** Loads the `@anthropic-ai/sdk` package (DEPENDENCY_MISSING when it is not installed). */
export function loadAnthropicSdk(): Promise<AnthropicSdk> {
  return loadOptionalPeer('@anthropic-ai/sdk', () => import('@anthropic-ai/sdk'));
}

/** The error classes of a loaded SDK. */
export function vendorErrorClasses(sdk: OpenAiSdk | AnthropicSdk): VendorErrorClasses {
  return { abort: sdk.APIUserAbortError, timeout: sdk.APIConnectionTimeoutError, connection: sdk.APIConnectionError };
}
