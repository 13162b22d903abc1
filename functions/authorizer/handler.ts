/**
 * Lambda entry of the TOKEN authorizer. Environment, read and checked once at cold start (a
 * missing or wrong setting fails the start, naming every problem): `TOKEN_ISSUER`,
 * `TOKEN_AUDIENCE`, `TOKEN_AUDIENCE_CLAIM`, `JWKS_URI` (see `config.ts`).
 */
import { readAuthorizerConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

/** The Lambda entry; the JWKS cache lives as long as the container. */
export const handler = createHandler(readAuthorizerConfig(process.env));
