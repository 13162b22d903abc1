/**
 * The Plant Store's deployment stages: every setting that differs between `dev` and `prod`, in
 * one typed place. `npx cdk deploy -c stage=<name>` picks one; `dev` is the default.
 *
 * This module is plain data: it must not import aws-cdk-lib, since the local API reads a stage's
 * throttling from it to imitate the deployed gateway.
 */
import type { PlantEventType, WebhookFormat } from '../functions/shared/webhooks/plant-events.ts';

/** Where the bearer tokens the authorizer accepts come from. */
export type IssuerConfig = CognitoIssuerConfig | OidcIssuerConfig;

/**
 * A Cognito user pool created by the stack: a resource server granting the API's scopes
 * (`plants/read`, `plants/write`) and one app client for the client-credentials grant.
 */
export interface CognitoIssuerConfig {
  readonly kind: 'cognito';
  /**
   * First part of the hosted domain `<prefix>-<stage>-<account>.auth.<region>.amazoncognito.com`.
   * Cognito domains are global per region and must not contain `aws`, `amazon` or `cognito`.
   * @default 'plant-store'
   */
  readonly domainPrefix?: string;
  /**
   * The pool's issuer format (`IssuerConfiguration`), pinned because the authorizer's
   * `TOKEN_ISSUER` and JWKS URL are derived from it and a mismatch rejects every token:
   * `ORIGINAL` issues `https://cognito-idp.<region>.amazonaws.com/<pool id>`, `UPDATED`
   * `https://issuer-cognito-idp.<region>.amazonaws.com/<pool id>` (for multi-Region pools).
   * @default 'ORIGINAL'
   */
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

/**
 * The stage's throttling budget: steady requests per second and burst size for the whole stage.
 * API Gateway throttles each method on its own, so every route gets an equal share
 * (`infra/throttling.ts`) and together they never pass these numbers.
 */
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
  /**
   * `plant` (the StoredPlant alone, `plant.created` only) or `event` (the Standard Webhooks
   * envelope `{type, timestamp, data}`). @default 'plant'
   */
  readonly format?: WebhookFormat;
  /**
   * The event types it hears of: `plant.created`, `plant.updated`, `plant.deleted`.
   * @default ['plant.created'] in the plant format, every type in the event format
   */
  readonly events?: readonly PlantEventType[];
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

/** Everything a stage decides. */
export interface StageConfig {
  /** Stage name: in the stack name (`PlantStore-<name>`) and the API's URL path. */
  readonly name: string;
  /** `true` keeps data when the stack is deleted and refuses accidental table deletion. */
  readonly productionLike: boolean;
  readonly throttling: ThrottlingConfig;
  /**
   * The webhook endpoint routes' budget, shared by those ten routes.
   * @default {@link defaultEndpointThrottling} (20/s, bursts of 40)
   */
  readonly webhookEndpointThrottling?: ThrottlingConfig;
  /** Days the functions' and the access logs are kept (a CloudWatch Logs retention value). */
  readonly logRetentionDays: LogRetentionDays;
  readonly issuer: IssuerConfig;
  /**
   * ARN of an existing regional AWS WAFv2 web ACL to put in front of the API stage (web ACLs
   * are usually managed per account, e.g. by Firewall Manager, and shared by many APIs); its team
   * adds the per-client rules to it (docs/deploying.md), since a stage has one web ACL.
   * @default the stage's own web ACL, holding the per-client limits (`infra/token-limits.ts`)
   */
  readonly webAclArn?: string;
  /**
   * Who hears of new (and, if they choose, changed and deleted) plants: signed webhooks, retried
   * for a day. Each gets a secret in
   * Secrets Manager, `plant-store/<stage>/webhooks/<name>`.
   * @default none
   */
  readonly webhookSubscribers?: readonly WebhookSubscriberConfig[];
  /**
   * Whether this stack creates and sets API Gateway's account-wide CloudWatch Logs role. Where a
   * platform team owns that role (one per account and region), set `false`: the stage then uses
   * the role already set on the account, and access logs need it.
   * @default true
   */
  readonly manageApiGatewayCloudWatchRole?: boolean;
  /**
   * The AWS account (12 digits) and region this stage may only be deployed to. Pinned, a
   * `cdk synth|deploy` with credentials of another account or region fails before anything
   * changes. @default deployable anywhere (the caller's account and region)
   */
  readonly account?: string;
  readonly region?: string;
  /**
   * Who the alarms notify (one SNS topic per stage, output as `AlarmTopicArn`).
   * @default nobody yet: subscribe to the topic
   */
  readonly alarmNotifications?: AlarmNotificationsConfig;
  /** Serve the stage on a domain of your own; `ApiUrl` and the `next` links then use it. */
  readonly customDomain?: CustomDomainConfig;
  /**
   * Web pages on other origins that may call the API from a browser (CORS): exact origins
   * (`https://app.example.com`), or `*` for any origin in a stage that is not production-like.
   * @default none: browsers refuse every cross-origin call
   */
  readonly cors?: { readonly allowedOrigins: readonly string[] };
  /**
   * The p99 of an API function's or the authorizer's Init Duration (ms) above which its cold
   * starts page. @default {@link defaultInitDurationAlarmMilliseconds}
   */
  readonly initDurationAlarmMilliseconds?: number;
}

/**
 * The Init Duration p99 that pages: about three times what `npm run bench` measures for an API
 * function's Node.js start and bundle import on one core, scaled to the 0.58 of a vCPU Lambda
 * gives 1,024 MB (the figures and the sum: docs/performance.md#memory). Past it the bundle grew,
 * or its init waits on the network, and every client that meets a cold start waits that long
 * before its request starts.
 */
export const defaultInitDurationAlarmMilliseconds = 500;

/** Retention periods CloudWatch Logs accepts (a subset: the ones that make sense here). */
export type LogRetentionDays = 1 | 3 | 5 | 7 | 14 | 30 | 60 | 90 | 180 | 365 | 731;

/** Stage names this app knows. */
export type StageName = 'dev' | 'prod';

export const defaultStageName: StageName = 'dev';

export const stages: Readonly<Record<StageName, StageConfig>> = {
  dev: {
    name: 'dev',
    productionLike: false,
    // Enough for a developer and an integration-test run, low enough that a runaway loop
    // cannot run up a bill: 429 beyond 60 requests per second in all, bursts of 120; each of
    // the six routes 10/s, bursts of 20 (API Gateway throttles each method on its own).
    throttling: { rateLimit: 60, burstLimit: 120 },
    logRetentionDays: 7,
    issuer: { kind: 'cognito' },
    // A web app's dev server on a developer's machine may call the dev stage.
    cors: { allowedOrigins: ['http://localhost:5173'] },
  },
  prod: {
    name: 'prod',
    productionLike: true,
    // Sized to protect the table and the account's Lambda concurrency (1000 by default, shared
    // by every function of the region): at ~50 ms per create, 200 requests per second in all
    // need about 10 concurrent functions; a burst of 400 absorbs client retries without 429s.
    // Each route gets its share (33.3/s, bursts of 66). Raise both together with a concurrency
    // quota increase.
    throttling: { rateLimit: 200, burstLimit: 400 },
    // A year: long enough to answer for any request of the past year (the Control Tower rule
    // CT.CLOUDWATCH.PR.2 that cfn-guard checks asks for as much).
    logRetentionDays: 365,
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
  constructor(message: string) {
    super(message);
    this.name = 'WrongDeploymentTargetError';
  }
}

/**
 * Refuses to build a pinned stage for another account or region. The CDK CLI passes the
 * caller's account and region as `CDK_DEFAULT_ACCOUNT` and `CDK_DEFAULT_REGION` (absent without
 * credentials, when synth goes on: nothing can be deployed then).
 *
 * @throws WrongDeploymentTargetError naming both accounts or regions.
 */
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
