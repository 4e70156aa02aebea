/**
 * Imported (for its effect) by the commands that run one attempt and exit (`start`, the direct `<engine>` form,
 * `resume`, `demo`), before anything else they load. Such a process parses each schema once or twice, and zod's JIT
 * (a parser compiled with `new Function` per object schema on its first parse) costs more than it saves there: the
 * attempt's meta alone took 8 ms with it. zod reads the setting when a schema is **built**, not when it parses, so
 * this must run before the protocol's schemas are: a `z.config` in a module that imports them comes too late. A
 * process that embeds the harness (the Vitest fixtures) keeps zod's default, which pays off over many attempts.
 */
import { z } from 'zod';

z.config({ jitless: true });
