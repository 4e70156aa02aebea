/**
 * `startModelServer`: the scripted model server serving the tool tables of every registered engine (built-in or
 * registered at run time, as the server starts) unless given its own. Here, above both: the model server sits
 * below the engines and is given its tables (model/server.ts names no engine and imports no registry).
 */
import { listenModelServer, type ModelServer, type ModelServerOptions } from '../model/server.js';
import { loadToolTables } from './registry.js';

/** Options of {@link startModelServer}: the model server's, its tool tables optional. */
export type StartModelServerOptions = Omit<ModelServerOptions, 'tools'> & Partial<Pick<ModelServerOptions, 'tools'>>;

/** Starts a scripted model server on 127.0.0.1; MODEL_SERVER_FAILED when it cannot listen. */
export async function startModelServer(options: StartModelServerOptions = {}): Promise<ModelServer> {
  return listenModelServer({ ...options, tools: options.tools ?? (await loadToolTables()) });
}
