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
 * A stage URL for "try it", or why it is not one: only a plain http(s) URL (no user name or
 * password, no query or fragment), written back as the URL parser spells it.
 */
export function plainServerUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--server is not a URL: ${JSON.stringify(text)}`);
  }
  if (!['http:', 'https:'].includes(url.protocol)) {
    throw new Error(`--server must be an http or https URL, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new Error('--server must be a plain URL: no user name, password, query or fragment');
  }
  return url.href.replace(/\/$/, '');
}

/** JSON that cannot end the inline script it sits in, nor open a comment or CDATA there. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026')
    .replaceAll('\u2028', '\\u2028')
    .replaceAll('\u2029', '\\u2029');
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
    // Scalar's hosted features (its AI agent, MCP, deploy, share, the toolbar's configure and
    // developer tools, "open in" editor links) would send the document to Scalar or another
    // third party, or edit what is a reference: a private, offline page offers none of them.
    agent: { disabled: true },
    mcp: { disabled: true },
    showToolbar: 'never',
    showDeveloperTools: 'never',
    isEditable: false,
    hideClientButton: true,
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
      const configuration = ${scriptJson(configuration)};
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
