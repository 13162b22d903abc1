/**
 * The deployment stages: every setting that differs between `dev` and `prod`
 * (`-c stage=<name>`; `dev` by default). Plain data, no aws-cdk-lib: `npm start` reads it too.
 */
import type { PlantEventType, WebhookFormat } from '../functions/shared/webhooks/plant-events.ts';

/** Where the bearer tokens the authorizer accepts come from. */
export type IssuerConfig = CognitoIssuerConfig | OidcIssuerConfig;

/** A Cognito user pool the stack creates, with the API's scopes and a client-credentials client. */
export interface CognitoIssuerConfig {
  readonly kind: 'cognito';
  /**
   * `<prefix>-<stage>-<account>.auth.<region>.amazoncognito.com`; no `aws`, `amazon`, `cognito`.
   * @default 'plant-store'
   */
  readonly domainPrefix?: string;
  /** The pool's `IssuerConfiguration`, pinned: the issuer derives from it. @default 'ORIGINAL' */
  readonly issuerFormat?: 'ORIGINAL' | 'UPDATED';
}

/** An existing OIDC issuer (Auth0, Okta, Entra ID, another Cognito pool…) named by its URL. */
export interface OidcIssuerConfig {
  readonly kind: 'oidc';
  /** The exact `iss` claim of the tokens, e.g. `https://example.eu.auth0.com/`. */
  readonly issuerUrl: string;
  /** The accepted `aud` values (the API's identifier at the issuer). */
  readonly audience: string | readonly string[];
  /** @default `<issuerUrl>/.well-known/jwks.json` (right for Auth0 and Cognito; Okta differs) */
  readonly jwksUri?: string;
  /** Shown as the `TokenUrl` output so clients know where to get tokens. */
  readonly tokenUrl?: string;
}

/** A throttling budget for the whole stage, shared out among its routes (`infra/throttling.ts`). */
export interface ThrottlingConfig {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/** A receiver of plant webhooks; the stack makes its signing secret. */
export interface WebhookSubscriberConfig {
  /** Lower-case letters, digits and dashes: part of the secret's name. */
  readonly name: string;
  /** Where the webhooks are POSTed: https only. */
  readonly url: string;
  /** `plant` (the plant alone, creates only) or `event` (the envelope). @default 'plant' */
  readonly format?: WebhookFormat;
  /** @default ['plant.created'] in the plant format, every type in the event format */
  readonly events?: readonly PlantEventType[];
}

/** Webhooks' first attempts: functions at once, on queues of 1,000 at most each (docs/capacity.md). */
export interface WebhookDeliveriesConfig {
  readonly concurrency: number;
  readonly queues: number;
}

/** Who hears of the stage's alarms: e-mail addresses and a Slack channel (AWS Chatbot). */
export interface AlarmNotificationsConfig {
  readonly emails?: readonly string[];
  /** A channel of a Slack workspace already authorised in AWS Chatbot. */
  readonly slack?: { readonly workspaceId: string; readonly channelId: string };
}

/** A domain of the team's own in front of the stage, e.g. `plants.example.com`. */
export interface CustomDomainConfig {
  readonly domainName: string;
  /** An ACM certificate for the domain, in the stage's region (regional endpoint). */
  readonly certificateArn: string;
  /** The path the API sits under (`v1` → `https://<domain>/v1/plants`). @default the root */
  readonly basePath?: string;
  /** A Route 53 hosted zone to add the domain's alias record to. @default none: add it by hand */
  readonly hostedZone?: { readonly hostedZoneId: string; readonly zoneName: string };
}

/** Everything a stage decides: docs/deploying.md, "Stage settings". */
export interface StageConfig {
  /** Stage name: in the stack name (`PlantStore-<name>`) and the API's URL path. */
  readonly name: string;
  /** `true` keeps data when the stack is deleted and refuses accidental table deletion. */
  readonly productionLike: boolean;
  readonly throttling: ThrottlingConfig;
  /** The webhook endpoint routes' shared budget. @default 20/s, bursts of 40 */
  readonly webhookEndpointThrottling?: ThrottlingConfig;
  /** Days the functions' and the access logs are kept (a CloudWatch Logs retention value). */
  readonly logRetentionDays: LogRetentionDays;
  readonly issuer: IssuerConfig;
  /** An existing regional web ACL; its team adds the per-token rules. @default the stage's own */
  readonly webAclArn?: string;
  /** The stage's own subscribers; each gets a secret `plant-store/<stage>/webhooks/<name>`. */
  readonly webhookSubscribers?: readonly WebhookSubscriberConfig[];
  /** Sets API Gateway's account-wide logs role (not where a platform team does). @default true */
  readonly manageApiGatewayCloudWatchRole?: boolean;
  /** The only account and region the stage deploys to. @default the caller's */
  readonly account?: string;
  readonly region?: string;
  /** Who the alarms notify, beside the `AlarmTopicArn` topic. @default nobody */
  readonly alarmNotifications?: AlarmNotificationsConfig;
  /** Serve the stage on a domain of your own; `ApiUrl` and the `next` links then use it. */
  readonly customDomain?: CustomDomainConfig;
  /** Browser origins allowed to call (CORS); `*` only where not production-like. @default none */
  readonly cors?: { readonly allowedOrigins: readonly string[] };
  /**
   * The share of sampled traces (X-Ray's sampling rule, or a client's flag) whose spans go to
   * X-Ray's OTLP endpoint (docs/tracing.md), with Transaction Search on. @default 0: none
   */
  readonly traceSampleRatio?: number;
  /** @default {@link defaultWebhookDeliveries}: 600 functions on one queue */
  readonly webhookDeliveries?: WebhookDeliveriesConfig;
  /** Init Duration p99 (ms) that pages. @default {@link defaultInitDurationAlarmMilliseconds} */
  readonly initDurationAlarmMilliseconds?: number;
}

/** About three times the benched cold start at 1,024 MB (docs/performance.md#memory). */
export const defaultInitDurationAlarmMilliseconds = 500;

/** The routes and the authorizer keep the rest of the account's 1,000. */
export const defaultWebhookDeliveries: WebhookDeliveriesConfig = { concurrency: 600, queues: 1 };

/** Retention periods CloudWatch Logs accepts (a subset: the ones that make sense here). */
export type LogRetentionDays = 1 | 3 | 5 | 7 | 14 | 30 | 60 | 90 | 180 | 365 | 731;

/** Stage names this app knows. */
export type StageName = 'dev' | 'prod';

export const defaultStageName: StageName = 'dev';

export const stages: Readonly<Record<StageName, StageConfig>> = {
  dev: {
    name: 'dev',
    productionLike: false,
    // Enough for a developer and a test run (each write 10/s); a runaway loop cannot run up a bill.
    throttling: { rateLimit: 100, burstLimit: 200 },
    logRetentionDays: 7,
    issuer: { kind: 'cognito' },
    // A web app's dev server on a developer's machine may call the dev stage.
    cors: { allowedOrigins: ['http://localhost:5173'] },
    // Two queues, so that every deploy of dev shares endpoints among queues as a large stage does.
    webhookDeliveries: { concurrency: 100, queues: 2 },
  },
  prod: {
    name: 'prod',
    productionLike: true,
    // ~10 concurrent functions at ~50 ms a request, of the account's 1,000; raise with its quota.
    throttling: { rateLimit: 200, burstLimit: 400 },
    // A year, as Control Tower's CT.CLOUDWATCH.PR.2 asks.
    logRetentionDays: 365,
    // Every trace X-Ray samples (by default the first request a second and 5 % of the rest).
    traceSampleRatio: 1,
    issuer: { kind: 'cognito' },
  },
};

/** A `-c stage=<name>` that names no stage of {@link stages}. */
export class UnknownStageError extends Error {
  constructor(stageName: string) {
    super(
      `Unknown stage "${stageName}". Known stages: ${Object.keys(stages).join(', ')} ` +
        '(add one in infra/stages.ts).',
    );
    this.name = 'UnknownStageError';
  }
}

/** A synth or deploy of a pinned stage with credentials of another account or region. */
export class WrongDeploymentTargetError extends Error {
  override readonly name = 'WrongDeploymentTargetError';
}

/** Refuses a pinned stage for the caller's other account or region (`CDK_DEFAULT_*`). */
export function checkDeploymentTarget(
  stage: StageConfig,
  environment: Record<string, string | undefined>,
): void {
  const account = environment.CDK_DEFAULT_ACCOUNT;
  const region = environment.CDK_DEFAULT_REGION;
  if (stage.account !== undefined && account !== undefined && account !== stage.account) {
    throw new WrongDeploymentTargetError(
      `Stage ${stage.name} deploys only to account ${stage.account}, but the credentials are for account ${account}. Nothing was changed.`,
    );
  }
  if (stage.region !== undefined && region !== undefined && region !== stage.region) {
    throw new WrongDeploymentTargetError(
      `Stage ${stage.name} deploys only to region ${stage.region}, but the current region is ${region}. Nothing was changed.`,
    );
  }
}

/** The configuration of a stage by name; `undefined` means the default stage. */
export function resolveStageConfig(
  stageName: string = defaultStageName,
  known: Readonly<Record<string, StageConfig>> = stages,
): StageConfig {
  const stage = Object.hasOwn(known, stageName) ? known[stageName] : undefined;
  if (stage === undefined) throw new UnknownStageError(stageName);
  return stage;
}
