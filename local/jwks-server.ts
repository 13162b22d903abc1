/**
 * Serves the local issuer's JWKS on 127.0.0.1 so the local API's authorizer fetches its keys the
 * way the deployed one does, over HTTP from a JWKS URI, rather than being handed them.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Jwks, localAudience, localIssuer } from './token-issuer.ts';

/** The path the JWKS is served at, as OIDC issuers publish it. */
export const jwksPath = '/.well-known/jwks.json';

export interface JwksServer {
  /** `http://127.0.0.1:<port>/.well-known/jwks.json` */
  readonly jwksUri: string;
  /** How many times the JWKS was served: shows the authorizer's caching. */
  readonly fetchCount: number;
  close(): Promise<void>;
}

/**
 * Starts serving `jwks` (or, given a function, whatever it returns at each request: a key
 * rotation) on `host` (127.0.0.1; `sam local`'s containers need the Docker bridge's gateway) at
 * a free port.
 */
export async function startJwksServer(
  jwks: Jwks | (() => Jwks),
  host = '127.0.0.1',
): Promise<JwksServer> {
  let fetchCount = 0;
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== jwksPath) {
      response.writeHead(404).end();
      return;
    }
    fetchCount += 1;
    const body = JSON.stringify(typeof jwks === 'function' ? jwks() : jwks);
    response.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    jwksUri: `http://${host}:${port}${jwksPath}`,
    get fetchCount() {
      return fetchCount;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Keep-alive connections would hold the server (and the process) open.
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** The environment of an authorizer that accepts the local issuer's tokens from `jwksUri`. */
export function localAuthorizerEnvironment(jwksUri: string): Record<string, string> {
  return {
    TOKEN_ISSUER: localIssuer,
    TOKEN_AUDIENCE: localAudience,
    TOKEN_AUDIENCE_CLAIM: 'aud',
    JWKS_URI: jwksUri,
  };
}
