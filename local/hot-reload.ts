/**
 * Hot reload for `npm start`: a saved change under `functions/` is imported afresh and answers the
 * next request, with the store, the queues and every connection left as they are.
 *
 * ES modules are cached by URL, so each reload imports the functions at a new URL: the entry's
 * with `?generation=<n>`, and, by a resolve hook (`module.registerHooks`), every file under
 * `functions/` it imports with the same query. Packages in `node_modules` are not imported again,
 * so a reload takes a fraction of a second. The old generation's modules stay in memory (a few
 * hundred kilobytes each), which a development server can afford.
 */
import { existsSync, type FSWatcher, readFileSync, watch } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Imports a module of `functions/` as it is on disk now. */
export type ImportFresh = (url: URL) => Promise<unknown>;

export interface HotReloadOptions {
  /** The folder watched, whose files are imported afresh: `functions/`. */
  readonly root: URL;
  /** Builds the handlers again from fresh imports; a rejection keeps the previous ones. */
  readonly reload: (importFresh: ImportFresh) => Promise<void>;
  /** Told once per reload: what changed, and how it went. */
  readonly report: (outcome: ReloadOutcome) => void;
  /** How long to wait for an editor's burst of writes to end. @default 100 */
  readonly settleMilliseconds?: number;
}

export type ReloadOutcome =
  | { readonly ok: true; readonly changed: readonly string[]; readonly milliseconds: number }
  | { readonly ok: false; readonly changed: readonly string[]; readonly error: unknown };

export interface HotReload {
  /** Stops watching, and resolves once a reload under way has ended. */
  stop(): Promise<void>;
}

let hookedRoots: Set<string> | undefined;

/** Makes a file under one of the roots, imported by a generation's file, the same generation. */
function hookGenerations(root: URL): void {
  if (hookedRoots === undefined) {
    const roots = new Set<string>();
    hookedRoots = roots;
    registerHooks({
      resolve: (specifier, context, nextResolve) => {
        const resolved = nextResolve(specifier, context);
        const parent = context.parentURL;
        if (parent === undefined || !parent.includes('?generation=')) return resolved;
        const generation = new URL(parent).searchParams.get('generation');
        const inRoot = [...roots].some((href) => resolved.url.startsWith(href));
        if (generation === null || !inRoot || resolved.url.includes('?')) return resolved;
        return { ...resolved, url: `${resolved.url}?generation=${generation}` };
      },
    });
  }
  hookedRoots.add(root.href);
}

/** Watches `root` and reloads after each burst of saved `.ts` files, one reload at a time. */
export function startHotReload(options: HotReloadOptions): HotReload {
  hookGenerations(options.root);
  let generation = 0;
  let timer: NodeJS.Timeout | undefined;
  let changed = new Set<string>();
  let stopped = false;
  let running: Promise<void> = Promise.resolve();

  const reload = async () => {
    // Saves during a reload start another one when it ends; one that finds them done is none.
    if (stopped || changed.size === 0) return;
    const files = [...changed].sort();
    changed = new Set();
    generation += 1;
    const current = generation;
    const started = performance.now();
    let outcome: ReloadOutcome;
    try {
      await options.reload((url) => import(`${url.href}?generation=${current}`));
      outcome = { ok: true, changed: files, milliseconds: Math.round(performance.now() - started) };
    } catch (error) {
      outcome = { ok: false, changed: files, error };
    }
    try {
      options.report(outcome);
    } catch {
      // A report that fails must not stop the next reloads.
    }
  };

  const watcher: FSWatcher = watch(
    fileURLToPath(options.root),
    { recursive: true },
    (_event, filename) => {
      if (stopped || filename === null || !filename.endsWith('.ts')) return;
      changed.add(filename);
      clearTimeout(timer);
      timer = setTimeout(() => {
        running = running.then(reload);
      }, options.settleMilliseconds ?? 100);
    },
  );
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      watcher.close();
      await running;
    },
  };
}

/** An `import … from '…'` or `export … from '…'` of a relative module, and whether it is type-only. */
const importStatement =
  /^\s*(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s*'(\.{1,2}\/[^']+)'/gm;

/** Whether an import's names are all types (`import { type A, type B } from …`). */
function typesOnly(clause: string): boolean {
  const names = /^\{([^}]*)\}$/.exec(clause.trim())?.[1];
  if (names === undefined) return false;
  return names
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
    .every((name) => name.startsWith('type '));
}

/**
 * The files under `functionsRoot` that `npm start`'s own modules (`start.ts` and `local-api.ts`
 * under `localRoot`, and what they import, statically) load at start: what a reload cannot
 * change, paths relative to `functionsRoot`. The functions the local API imports by URL (its
 * route functions, the authorizer, the webhook pipeline's) are not among them.
 */
export function filesImportedAtStart(localRoot: URL, functionsRoot: URL): ReadonlySet<string> {
  const seen = new Set<string>();
  const found = new Set<string>();
  const visit = (url: URL) => {
    if (seen.has(url.href) || !existsSync(url)) return;
    seen.add(url.href);
    if (url.href.startsWith(functionsRoot.href))
      found.add(url.href.slice(functionsRoot.href.length));
    for (const [, type, clause, specifier] of readFileSync(url, 'utf8').matchAll(importStatement)) {
      if (type !== undefined || typesOnly(clause ?? '') || !specifier?.endsWith('.ts')) continue;
      visit(new URL(specifier, url));
    }
  };
  for (const entry of ['start.ts', 'local-api.ts']) visit(new URL(entry, localRoot));
  return found;
}
