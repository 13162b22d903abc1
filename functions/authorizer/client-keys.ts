/**
 * Each client's API key in the stage's usage plan, which API Gateway throttles per client before
 * the per-method buckets every client shares (docs/decisions/per-client-limits.md). The
 * authorizer returns the key as `usageIdentifierKey`; a client seen for the first time gets its
 * key here, made once and added to the plan.
 */
import { createHash } from 'node:crypto';
import {
  type APIGatewayClient,
  ConflictException,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';

/** The client every request is counted as while its own key cannot be made. */
export const sharedClient = '*';

/**
 * A client's key value in a usage plan: derived, so every container and the stack agree without
 * storing it. Not a secret: with the key source `AUTHORIZER`, API Gateway ignores any key a
 * request carries ("Choose an API key source in API Gateway", API Gateway developer guide).
 */
export function clientKeyValue(usagePlanName: string, client: string): string {
  return createHash('sha256').update(`${usagePlanName}\n${client}`).digest('base64url');
}

/** Makes sure a key value is one of the plan's keys; resolves once it is. */
export type RegisterClientKey = (value: string) => Promise<void>;

/**
 * Registers keys in the plan named `usagePlanName`, each at most once per container: a key found
 * by its name (the value) is reused, and a race with another container ends in its key
 * (`ConflictException`). A failed registration is forgotten, so the next request tries again.
 */
export function createClientKeyRegistry(
  apiGateway: APIGatewayClient,
  usagePlanName: string,
): RegisterClientKey {
  const registered = new Map<string, Promise<void>>();
  let planId: Promise<string> | undefined;

  const findPlan = async () => {
    for (let position: string | undefined; ; ) {
      const page = await apiGateway.send(new GetUsagePlansCommand({ position, limit: 500 }));
      const plan = page.items?.find((item) => item.name === usagePlanName);
      if (plan?.id !== undefined) return plan.id;
      position = page.position;
      if (position === undefined) throw new Error(`No usage plan named ${usagePlanName}`);
    }
  };
  const keyIdOf = async (value: string) => {
    const { items = [] } = await apiGateway.send(new GetApiKeysCommand({ nameQuery: value }));
    const found = items.find((item) => item.name === value)?.id;
    if (found !== undefined) return found;
    try {
      const { id } = await apiGateway.send(
        new CreateApiKeyCommand({ name: value, value, enabled: true }),
      );
      return id as string;
    } catch (error) {
      if (!(error instanceof ConflictException)) throw error;
      return keyIdOf(value);
    }
  };
  const register = async (value: string) => {
    planId ??= findPlan().catch((error: unknown) => {
      planId = undefined;
      throw error;
    });
    const [usagePlanId, keyId] = await Promise.all([planId, keyIdOf(value)]);
    try {
      await apiGateway.send(
        new CreateUsagePlanKeyCommand({ usagePlanId, keyId, keyType: 'API_KEY' }),
      );
    } catch (error) {
      if (!(error instanceof ConflictException)) throw error;
    }
  };

  return (value) => {
    let registration = registered.get(value);
    if (registration === undefined) {
      registration = register(value).catch((error: unknown) => {
        registered.delete(value);
        throw error;
      });
      registered.set(value, registration);
    }
    return registration;
  };
}
