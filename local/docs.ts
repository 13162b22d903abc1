/**
 * `npm run docs -- [folder] [--server <url>]`: the API reference as static files (`index.html`,
 * Scalar's script, `openapi.yaml`) in `folder` (default `.data/docs`), for publishing a deployed
 * stage's reference on any static host. `--server` is the stage's URL its "try it" calls (a plain http(s) URL; anything else is refused).
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { docsPageHtml, plainServerUrl, scalarScriptPath } from './docs-page.ts';

const { values, positionals } = parseArgs({
  options: { server: { type: 'string' } },
  allowPositionals: true,
});
let serverUrl: string | undefined;
try {
  serverUrl = values.server === undefined ? undefined : plainServerUrl(values.server);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}
const folder = resolve(positionals[0] ?? '.data/docs');
mkdirSync(folder, { recursive: true });
copyFileSync(scalarScriptPath(), join(folder, 'scalar.js'));
copyFileSync(join(import.meta.dirname, '..', 'openapi.yaml'), join(folder, 'openapi.yaml'));
writeFileSync(join(folder, 'index.html'), docsPageHtml('openapi.yaml', 'scalar.js', serverUrl));
process.stdout.write(
  `The API reference is in ${folder} (open index.html through any web server).\n`,
);
