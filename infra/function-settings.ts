/** Per-function sizing and access: the one place to change them. Plain data: the bench reads it. */
import { type RouteFunctionName, routeFunctionFolder } from '../functions/shared/http/routes.ts';

export interface FunctionSettings {
  /** Handler module, relative to the repository root; it exports `handler`. */
  readonly entry: string;
  /** CPU scales with it (1,769 MB = one vCPU): it sets cold starts too. */
  readonly memorySizeMb: number;
  readonly timeoutSeconds: number;
  /** The plants table's actions its code sends, and no more (a test reads each bundle). */
  readonly tableActions?: readonly string[];
  /** Whether it skips stored items that are not plants (the `ItemsNotPlants` metric). */
  readonly skipsItemsNotPlants?: boolean;
  readonly endpointAccess?: {
    /** On the endpoints table, the webhook log, and the key that seals the secrets. */
    readonly tableActions?: readonly string[];
    readonly logActions?: readonly string[];
    readonly keyActions?: readonly ('kms:GenerateDataKey' | 'kms:Decrypt')[];
    /** Whether it queues deliveries (a test event, a recover). */
    readonly sendsDeliveries?: boolean;
  };
}

/** What an endpoint function may do on the endpoint stores. */
export type EndpointAccess = NonNullable<FunctionSettings['endpointAccess']>;

/** A route function, sized alike (docs/decisions/memory.md) with the given access. */
function apiFunction<Access extends Partial<FunctionSettings>>(
  name: RouteFunctionName,
  access: Access,
) {
  return {
    entry: `${routeFunctionFolder(name)}/handler.ts`,
    memorySizeMb: 1024,
    // The store gives up after ~3 s (503); 10 s leaves room for a cold start.
    timeoutSeconds: 10,
    ...access,
  };
}

const endpointFunction = (name: RouteFunctionName, endpointAccess: EndpointAccess) =>
  apiFunction(name, { endpointAccess });

/** An `Idempotency-Key` in the log: read; taken and answered, or let go (`idempotency-keys.ts`). */
const idempotencyKeyActions = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:DeleteItem',
] as const;

/** The fan-out and the replay read who hears and keep the events, in the webhook log. */
const fanoutEndpointAccess = {
  logActions: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem'],
  sendsDeliveries: true,
} as const;

export const functionSettings = {
  createPlant: apiFunction('createPlant', {
    // A refused put returns the old item, which needs GetItem: a retry is 200, not an error.
    tableActions: ['dynamodb:PutItem', 'dynamodb:GetItem'],
  }),
  listPlants: apiFunction('listPlants', {
    tableActions: ['dynamodb:Scan'],
    skipsItemsNotPlants: true,
  }),
  getPlant: apiFunction('getPlant', {
    tableActions: ['dynamodb:GetItem'],
    skipsItemsNotPlants: true,
  }),
  updatePlant: apiFunction('updatePlant', {
    // Some preconditions read the plant first.
    tableActions: ['dynamodb:UpdateItem', 'dynamodb:GetItem'],
    skipsItemsNotPlants: true,
  }),
  deletePlant: apiFunction('deletePlant', {
    tableActions: ['dynamodb:DeleteItem', 'dynamodb:GetItem'],
    skipsItemsNotPlants: true,
  }),
  // Each reaches the endpoint stores as its work needs, and no plant.
  // Those taking an `Idempotency-Key` open a kept answer's secret again.
  createWebhookEndpoint: endpointFunction('createWebhookEndpoint', {
    // The endpoint, and the stage's data key read (or made, by the first to seal a secret).
    tableActions: ['dynamodb:PutItem', 'dynamodb:GetItem'],
    // The count, and the key's answer kept in the same transaction.
    logActions: ['dynamodb:UpdateItem', 'dynamodb:GetItem', 'dynamodb:PutItem'],
    keyActions: ['kms:GenerateDataKey', 'kms:Decrypt'],
  }),
  listWebhookEndpoints: endpointFunction('listWebhookEndpoints', {
    tableActions: ['dynamodb:Query'],
  }),
  getWebhookEndpoint: endpointFunction('getWebhookEndpoint', {
    tableActions: ['dynamodb:GetItem'],
  }),
  updateWebhookEndpoint: endpointFunction('updateWebhookEndpoint', {
    tableActions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
    logActions: ['dynamodb:UpdateItem'],
  }),
  deleteWebhookEndpoint: endpointFunction('deleteWebhookEndpoint', {
    tableActions: ['dynamodb:GetItem', 'dynamodb:DeleteItem'],
    logActions: ['dynamodb:UpdateItem'],
  }),
  getWebhookEndpointSecret: endpointFunction('getWebhookEndpointSecret', {
    tableActions: ['dynamodb:GetItem'],
    keyActions: ['kms:Decrypt'],
  }),
  rotateWebhookEndpointSecret: endpointFunction('rotateWebhookEndpointSecret', {
    tableActions: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
    logActions: [...idempotencyKeyActions],
    keyActions: ['kms:GenerateDataKey', 'kms:Decrypt'],
  }),
  testWebhookEndpoint: endpointFunction('testWebhookEndpoint', {
    tableActions: ['dynamodb:GetItem'],
    logActions: ['dynamodb:UpdateItem', ...idempotencyKeyActions],
    sendsDeliveries: true,
  }),
  listWebhookEndpointAttempts: endpointFunction('listWebhookEndpointAttempts', {
    tableActions: ['dynamodb:GetItem'],
    logActions: ['dynamodb:Query'],
  }),
  recoverWebhookEndpoint: {
    ...endpointFunction('recoverWebhookEndpoint', {
      tableActions: ['dynamodb:GetItem'],
      logActions: [
        'dynamodb:Query',
        'dynamodb:BatchGetItem',
        'dynamodb:UpdateItem',
        ...idempotencyKeyActions,
      ],
      sendsDeliveries: true,
    }),
    // Its claims are retried through a store pause past 10 s; 25 s answers its own 503, inside
    // API Gateway's 29 s, not a timeout's 500.
    timeoutSeconds: 25,
  },
  webhookFanout: {
    entry: 'functions/webhook-fanout/handler.ts',
    // No user waits on it: a cold start only delays deliveries.
    memorySizeMb: 512,
    timeoutSeconds: 30,
    skipsItemsNotPlants: true,
    endpointAccess: fanoutEndpointAccess,
  },
  deliverWebhook: {
    entry: 'functions/deliver-webhook/handler.ts',
    // Mostly waits on subscribers, a batch side by side, at most 10 s each.
    memorySizeMb: 512,
    timeoutSeconds: 30,
    endpointAccess: {
      tableActions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      // Attempts logged; the delivery claimed (a refused claim reads the item) and settled.
      logActions: [
        'dynamodb:PutItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:UpdateItem',
        'dynamodb:GetItem',
      ],
      keyActions: ['kms:Decrypt'],
    },
  },
  replayStreamFailures: {
    entry: 'functions/replay-stream-failures/handler.ts',
    // Every 5 minutes: under the period, so two runs never replay one batch side by side.
    memorySizeMb: 512,
    timeoutSeconds: 240,
    skipsItemsNotPlants: true,
    endpointAccess: fanoutEndpointAccess,
  },
  authorizer: {
    entry: 'functions/authorizer/handler.ts',
    // A full vCPU: its cold start delays the request it authorizes (docs/decisions/memory.md).
    memorySizeMb: 1769,
    timeoutSeconds: 5,
    // The clients' keys in the plan, recorded in the webhook log (`client-keys.ts`).
    endpointAccess: { logActions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
  },
} as const satisfies Record<
  RouteFunctionName | 'authorizer' | 'webhookFanout' | 'deliverWebhook' | 'replayStreamFailures',
  FunctionSettings
>;
