/**
 * The API reference at `/docs` on `npm start`: `openapi.yaml` rendered by Scalar's API Reference
 * (the npm package `@scalar/api-reference`, served from `node_modules`: no CDN, works offline),
 * with its request client pointed at this local API. `npm run docs` writes the same page as
 * static files for a deployed stage's team to publish (docs/running-locally.md, "The API reference").
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** A page the local API serves beside the API itself. */
export interface LocalPage {
  readonly contentType: string;
  readonly body: Buffer;
}

const repositoryRoot = join(import.meta.dirname, '..');

/** Scalar's self-contained browser build (one file, no further downloads). */
export function scalarScriptPath(): string {
  // The package exports its module entry (`dist/index.js`), not the browser build beside it.
  const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
  return join(dirname(entry), 'browser', 'standalone.js');
}

/**
 * The page: Scalar with the document from `documentUrl`, the built-in fonts off (they come from
 * Scalar's servers), and "try it" sending requests to `serverUrl` (this page's own origin when
 * absent) with a bearer token the reader pastes in.
 */
export function docsPageHtml(documentUrl: string, scriptUrl: string, serverUrl?: string): string {
  const configuration = {
    url: documentUrl,
    // Scalar's defaults fetch its fonts from its servers and send telemetry: neither, offline.
    withDefaultFonts: false,
    telemetry: false,
    authentication: { preferredSecurityScheme: 'bearerAuth' },
    ...(serverUrl === undefined ? {} : { servers: [{ url: serverUrl, description: 'This API' }] }),
  };
  const servers =
    serverUrl === undefined
      ? "configuration.servers = [{ url: location.origin, description: 'This local API' }];"
      : '';
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Plant Store API reference</title>
    <style>body { margin: 0; font-family: system-ui, sans-serif; }</style>
  </head>
  <body>
    <div id="app"></div>
    <script src="${scriptUrl}"></script>
    <script>
      const configuration = ${JSON.stringify(configuration)};
      ${servers}
      Scalar.createApiReference('#app', configuration);
    </script>
  </body>
</html>
`;
}

/** The pages by path: `/docs`, its script, and the document itself. Read once, on first use. */
export function createDocsPages(): (path: string) => LocalPage | undefined {
  let pages: Map<string, LocalPage> | undefined;
  const load = () =>
    new Map<string, LocalPage>([
      [
        '/docs',
        {
          contentType: 'text/html; charset=utf-8',
          body: Buffer.from(docsPageHtml('/openapi.yaml', '/docs/scalar.js')),
        },
      ],
      [
        '/docs/scalar.js',
        { contentType: 'text/javascript; charset=utf-8', body: readFileSync(scalarScriptPath()) },
      ],
      [
        '/openapi.yaml',
        {
          contentType: 'application/yaml; charset=utf-8',
          body: readFileSync(join(repositoryRoot, 'openapi.yaml')),
        },
      ],
    ]);
  return (path) => {
    pages ??= load();
    return pages.get(path === '/docs/' ? '/docs' : path);
  };
}
