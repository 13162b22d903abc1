import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  CfnApiKey,
  CfnUsagePlanKey,
  ContentHandling,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  type Method,
  MethodLoggingLevel,
  MockIntegration,
  ResponseType,
  RestApi,
  SecurityPolicy,
  TokenAuthorizer,
  UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayDomain } from 'aws-cdk-lib/aws-route53-targets';
import { CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { clientKeyValue, sharedClient } from '../functions/authorizer/client-keys.ts';
import { protectiveHeaders } from '../functions/shared/http/api-responses.ts';
import { gatewayResponseCors, preflightHeaders } from '../functions/shared/http/cors.ts';
import { type RouteFunctionName, routes } from '../functions/shared/http/routes.ts';
import { type GatewayResponse, gatewayResponses } from './gateway-responses.ts';
import type { CustomDomainConfig, ThrottlingConfig } from './stages.ts';
import { clientThrottling, isEndpointRoute, routeThrottling, tokenLimits } from './throttling.ts';
import { TokenRateLimits } from './token-limits.ts';

export interface PlantsApiProps {
  readonly stageName: string;
  /** The plants routes' budget, and the webhook endpoint routes' (a default when absent). */
  readonly throttling: ThrottlingConfig;
  readonly endpointThrottling?: ThrottlingConfig;
  /** The function behind each route of the route table. */
  readonly routeFunctions: Readonly<Record<RouteFunctionName, IFunction>>;
  readonly authorizerFunction: IFunction;
  readonly logRetention: RetentionDays;
  readonly logRemovalPolicy: RemovalPolicy;
  /** A regional WAFv2 web ACL to associate with the stage, when the stage names one. */
  readonly webAclArn?: string;
  /** Whether to create and set the account-wide CloudWatch Logs role. @default true */
  readonly manageCloudWatchRole?: boolean;
  /** A domain of the team's own, with its base path mapping. */
  readonly customDomain?: CustomDomainConfig;
  /** The origins whose pages may call the API (`functions/shared/http/cors.ts`). @default none */
  readonly allowedOrigins?: readonly string[];
}

/**
 * Seconds API Gateway caches an authorizer's answer per token. The authorizer's policy lists
 * every route the token's scopes grant, so a cached answer stays right for every method; 300 s
 * spares most invocations while a revoked client is locked out within five minutes.
 */
export const authorizerCacheSeconds = 300;

/**
 * The access-log line, one JSON object per request: who, what, the outcome and where time went.
 * Never the Authorization header, the body or the path as sent (`$context.path`, where a client
 * may have put a token): tokens and customer data stay out of the logs.
 */
export const accessLogFields = {
  requestId: AccessLogField.contextRequestId(),
  xrayTraceId: AccessLogField.contextXrayTraceId(),
  requestTime: AccessLogField.contextRequestTime(),
  ip: AccessLogField.contextIdentitySourceIp(),
  userAgent: AccessLogField.contextIdentityUserAgent(),
  principalId: AccessLogField.contextAuthorizerPrincipalId(),
  method: AccessLogField.contextHttpMethod(),
  // The route (`/plants/{id}`), never the path as sent: a client may put a token in it.
  resourcePath: AccessLogField.contextResourcePath(),
  protocol: AccessLogField.contextProtocol(),
  status: AccessLogField.contextStatus(),
  responseLength: AccessLogField.contextResponseLength(),
  latencyMs: AccessLogField.contextResponseLatency(),
  integrationLatencyMs: AccessLogField.contextIntegrationLatency(),
  authorizerLatencyMs: AccessLogField.contextAuthorizerLatency(),
  errorMessage: AccessLogField.contextErrorMessage(),
  errorResponseType: AccessLogField.contextErrorResponseType(),
  authorizerError: AccessLogField.contextAuthorizerError(),
  integrationError: AccessLogField.contextIntegrationErrorMessage(),
} as const;

/** The name of a stage's usage plan, which the authorizer adds each client's API key to. */
export function usagePlanName(stageName: string): string {
  return `plant-store-${stageName}-clients`;
}

/**
 * The Plant Store's REST API: every route of the route table behind a TOKEN authorizer, each
 * served by its own function through a Lambda proxy integration; the gateway's own
 * answers replaced by the Error body (from `gateway-responses.ts`, shared with the local API),
 * stage throttling, JSON access logs and X-Ray tracing.
 */
export class PlantsApi extends Construct {
  readonly restApi: RestApi;
  /** `https://…/<stage>/plants`. */
  plantsUrl: string;

  constructor(scope: Construct, id: string, props: PlantsApiProps) {
    super(scope, id);
    this.restApi = this.createRestApi(props);
    this.addClientUsagePlan(props, this.addRoutes(props));
    const allowedOrigins = props.allowedOrigins ?? [];
    if (allowedOrigins.length > 0) {
      for (const path of new Set(routes.map((route) => route.path))) {
        this.addPreflight(path, allowedOrigins);
      }
    }
    for (const response of Object.values(gatewayResponses)) {
      this.restApi.addGatewayResponse(
        response.type,
        toGatewayResponseOptions(response, allowedOrigins),
      );
    }
    this.plantsUrl = this.restApi.urlForPath('/plants');
    if (props.customDomain !== undefined) this.plantsUrl = this.addCustomDomain(props.customDomain);
    this.protectWithWebAcl(props, this.budgetsOf(props));
    this.acknowledgeFindings();
  }

  /**
   * The API and its stage: regional, every body binary, the stage's throttling shared out to its
   * methods, JSON access logs, error-level execution logs and X-Ray tracing.
   */
  private createRestApi(props: PlantsApiProps): RestApi {
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    const budgets = this.budgetsOf(props);
    const plantsShare = routeThrottling({ path: '/plants' }, budgets);
    return new RestApi(this, 'RestApi', {
      restApiName: `plant-store-${props.stageName}`,
      description:
        'Plant Store: add, list, read, change and delete plants with a bearer token, and manage webhook endpoints.',
      // Callers are services, mostly in AWS regions: no CloudFront edge in front.
      endpointTypes: [EndpointType.REGIONAL],
      // Every request body reaches the functions base64-encoded, exactly as sent, so that bytes
      // that are not UTF-8 are refused (docs/decisions/binary-bodies.md).
      binaryMediaTypes: ['*/*'],
      // Each client's key comes from the authorizer (`usageIdentifierKey`), never from a header.
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // API Gateway can only write logs through an account-wide role. Retained, because every
      // stage and API of the account shares it: deleting one stack must not break the others.
      // A stage whose account's platform team owns the role leaves it to them.
      ...(props.manageCloudWatchRole === false
        ? { cloudWatchRole: false }
        : { cloudWatchRole: true, cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN }),
      deployOptions: {
        stageName: props.stageName,
        // The stage's budget, shared by its methods: API Gateway limits each on its own. Every
        // method gets a plants route's share; the endpoint routes theirs, below.
        throttlingRateLimit: plantsShare.rateLimit,
        throttlingBurstLimit: plantsShare.burstLimit,
        methodOptions: Object.fromEntries(
          routes.filter(isEndpointRoute).map((route) => {
            const share = routeThrottling(route, budgets);
            return [
              `${route.path}/${route.method}`,
              { throttlingRateLimit: share.rateLimit, throttlingBurstLimit: share.burstLimit },
            ];
          }),
        ),
        tracingEnabled: true,
        metricsEnabled: true,
        // Execution logs for failures only; never request data (it holds tokens and bodies).
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.custom(JSON.stringify(accessLogFields)),
      },
    });
  }

  /** The stage's throttling budgets: the plants routes', and the endpoint routes'. */
  private budgetsOf(props: PlantsApiProps) {
    return {
      plants: props.throttling,
      ...(props.endpointThrottling === undefined
        ? {}
        : { webhookEndpoints: props.endpointThrottling }),
    };
  }

  /**
   * Every route of the route table: its function behind a proxy integration and the authorizer,
   * counted against the client's API key in the usage plan.
   */
  private addRoutes(props: PlantsApiProps) {
    const authorizer = new TokenAuthorizer(this, 'TokenAuthorizer', {
      handler: props.authorizerFunction,
      identitySource: 'method.request.header.Authorization',
      resultsCacheTtl: Duration.seconds(authorizerCacheSeconds),
    });
    return routes.map((route) => ({
      route,
      method: this.restApi.root.resourceForPath(route.path).addMethod(
        route.method,
        // No extra permission for the console's test invocations: only the stage may call.
        new LambdaIntegration(props.routeFunctions[route.function], { allowTestInvoke: false }),
        { authorizer, apiKeyRequired: true },
      ),
    }));
  }

  /**
   * The usage plan that limits each client on each method (`clientThrottling`), applied before
   * the method's own limit ("Throttle requests to your REST APIs", API Gateway developer guide).
   * The authorizer adds a client's key on first sight; the shared key, made here, counts the
   * clients whose own key could not be made.
   */
  private addClientUsagePlan(
    props: PlantsApiProps,
    methods: readonly { route: (typeof routes)[number]; method: Method }[],
  ): void {
    const budgets = this.budgetsOf(props);
    const name = usagePlanName(props.stageName);
    const plan = new UsagePlan(this, 'ClientUsagePlan', {
      name,
      description: 'Plant Store: each client’s limits per method; one API key per client.',
      apiStages: [
        {
          api: this.restApi,
          stage: this.restApi.deploymentStage,
          throttle: methods.map(({ route, method }) => ({
            method,
            throttle: clientThrottling(route, budgets),
          })),
        },
      ],
    });
    const value = clientKeyValue(name, sharedClient);
    const sharedKey = new CfnApiKey(this, 'SharedClientKey', { name: value, value, enabled: true });
    new CfnUsagePlanKey(this, 'SharedClientPlanKey', {
      usagePlanId: plan.usagePlanId,
      keyId: sharedKey.ref,
      keyType: 'API_KEY',
    });
    const role = props.authorizerFunction.role;
    if (role !== undefined)
      Validations.of(role).acknowledge({
        id: 'AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/*/keys]',
        reason:
          'The authorizer adds client keys to the stage’s usage plan, whose id it may not name: ' +
          'the plan waits for the stage, whose methods wait for the authorizer. It finds the plan ' +
          'by its name (the stage’s), and may only read plans and keys and add keys.',
      });
    props.authorizerFunction.addToRolePolicy(
      new PolicyStatement({
        actions: ['apigateway:GET', 'apigateway:POST'],
        resources: [
          Stack.of(this).formatArn({ service: 'apigateway', account: '', resource: '/usageplans' }),
          Stack.of(this).formatArn({ service: 'apigateway', account: '', resource: '/apikeys' }),
          // Not the plan's own id: the authorizer function would then wait for the plan, which
          // waits for the stage, whose methods wait for the authorizer.
          Stack.of(this).formatArn({
            service: 'apigateway',
            account: '',
            resource: '/usageplans/*/keys',
          }),
        ],
      }),
    );
  }

  /**
   * The web ACL in front of the stage: the one the stage names (an account-wide ACL, to which its
   * team adds the per-client rules, docs/deploying.md), or else the stage's own, which holds them.
   */
  private protectWithWebAcl(props: PlantsApiProps, budgets: Parameters<typeof tokenLimits>[0]) {
    const stageArn = this.restApi.deploymentStage.stageArn;
    if (props.webAclArn !== undefined) {
      new CfnWebACLAssociation(this, 'WebAclAssociation', {
        resourceArn: stageArn,
        webAclArn: props.webAclArn,
      });
      return;
    }
    new TokenRateLimits(this, 'ClientRateLimits', {
      stageName: props.stageName,
      limits: tokenLimits(budgets),
      stageArn,
      allowedOrigins: props.allowedOrigins ?? [],
    });
  }

  /** Every cdk-nag finding the API raises by design, with its reason. */
  private acknowledgeFindings(): void {
    const cloudWatchRole = this.restApi.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole !== undefined)
      Validations.of(cloudWatchRole).acknowledge({
        id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          'The account-wide role API Gateway writes access and execution logs with. ' +
          'AmazonAPIGatewayPushToCloudWatchLogs is the AWS-maintained policy made for exactly ' +
          'this role, and only API Gateway can assume it.',
      });

    Validations.of(this.restApi).acknowledge(
      {
        id: 'AwsSolutions::AwsSolutions-APIG2',
        reason:
          'The functions validate every request (content type, size, JSON, NewPlant schema, ' +
          'path and query parameters) and answer with the contract\u2019s error codes naming ' +
          'each failing field; an API Gateway validator would answer first, with its own codes ' +
          'and messages.',
      },
      {
        id: 'AwsSolutions::AwsSolutions-COG4',
        reason:
          'The TOKEN authorizer verifies Cognito access tokens (signature, issuer, client id, ' +
          'scope) and tokens of any other OIDC issuer a stage names, and answers 401/403 with ' +
          'the contract\u2019s Error body; a Cognito authorizer could do neither.',
      },
    );
  }

  /**
   * Answers a resource's CORS preflight in API Gateway itself (a mock integration, no token, no
   * function): the resource's methods from the route table, the allowed request headers, and
   * `Access-Control-Allow-Origin` only for an allowed origin, set by the integration response's
   * mapping template through `$context.responseOverride` (a disallowed origin gets none).
   */
  private addPreflight(path: string, allowedOrigins: readonly string[]): void {
    const methods = routes.filter((route) => route.path === path).map((route) => route.method);
    const literal = (value: string) => `'${value}'`;
    const headers: Record<string, string> = Object.fromEntries(
      Object.entries({
        ...preflightHeaders(methods),
        ...protectiveHeaders(false),
        ...(allowedOrigins.includes('*') ? { 'Access-Control-Allow-Origin': '*' } : {}),
      }).map(([name, value]) => [name, literal(value)]),
    );
    // Every header the answer may carry is declared by the method response, the origin too.
    const declared = Object.fromEntries(
      [...new Set([...Object.keys(headers), 'Access-Control-Allow-Origin'])].map((header) => [
        `method.response.header.${header}`,
        false,
      ]),
    );
    const conditions = allowedOrigins.map((origin) => `$origin == "${origin}"`).join(' || ');
    const method = this.restApi.root.resourceForPath(path).addMethod(
      'OPTIONS',
      new MockIntegration({
        // The API's binary media type `*/*` would make the mock's request and answer binary
        // (a preflight sends `Accept: */*`): text, so the templates apply.
        contentHandling: ContentHandling.CONVERT_TO_TEXT,
        requestTemplates: { 'application/json': '{"statusCode": 204}' },
        integrationResponses: [
          {
            statusCode: '204',
            contentHandling: ContentHandling.CONVERT_TO_TEXT,
            responseParameters: Object.fromEntries(
              Object.entries(headers).map(([header, value]) => [
                `method.response.header.${header}`,
                value,
              ]),
            ),
            responseTemplates: allowedOrigins.includes('*')
              ? {}
              : {
                  'application/json': [
                    '#set($origin = $input.params().header.get("Origin"))',
                    '#if("$!origin" == "")#set($origin = $input.params().header.get("origin"))#end',
                    `#if(${conditions})`,
                    '#set($context.responseOverride.header.Access-Control-Allow-Origin = $origin)',
                    '#end',
                  ].join('\n'),
                },
          },
        ],
      }),
      {
        authorizationType: AuthorizationType.NONE,
        methodResponses: [{ statusCode: '204', responseParameters: declared }],
      },
    );
    Validations.of(method).acknowledge({
      id: 'AwsSolutions::AwsSolutions-APIG4',
      reason:
        'A CORS preflight carries no credentials (browsers send it without the Authorization ' +
        'header, by the Fetch standard) and reaches no function or data: API Gateway answers it ' +
        'itself from a mock integration.',
    });
  }

  /**
   * Serves the stage on the team's domain (regional endpoint, TLS 1.2) under its base path, with
   * an alias record when a hosted zone is named. The functions build the `next` links from the
   * host and path a request came in on, so they follow the domain by themselves.
   */
  private addCustomDomain(config: CustomDomainConfig): string {
    const domain = this.restApi.addDomainName('CustomDomain', {
      domainName: config.domainName,
      certificate: Certificate.fromCertificateArn(this, 'Certificate', config.certificateArn),
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
      basePath: config.basePath,
    });
    if (config.hostedZone !== undefined) {
      new ARecord(this, 'CustomDomainRecord', {
        zone: HostedZone.fromHostedZoneAttributes(this, 'Zone', config.hostedZone),
        recordName: config.domainName,
        target: RecordTarget.fromAlias(new ApiGatewayDomain(domain)),
      });
    }
    const basePath = config.basePath === undefined ? '' : `/${config.basePath}`;
    return `https://${config.domainName}${basePath}/plants`;
  }
}

/**
 * A shared gateway response as CDK options: header values quoted as API Gateway requires, and
 * the stage's CORS headers (`gatewayAllowOrigin` says which origin it can name).
 */
function toGatewayResponseOptions(response: GatewayResponse, allowedOrigins: readonly string[]) {
  const responseHeaders: Record<string, string> = {};
  const cors = gatewayResponseCors(allowedOrigins);
  const literals: Record<string, string> = { ...response.headers, ...cors.literals };
  for (const [name, value] of Object.entries(literals)) {
    if (value.includes("'")) {
      throw new Error(`Gateway response header ${name} cannot contain a single quote: ${value}`);
    }
    responseHeaders[name] = `'${value}'`;
  }
  if (cors.echoOrigin) {
    responseHeaders['Access-Control-Allow-Origin'] = 'method.request.header.Origin';
  }
  return {
    type: ResponseType.of(response.type),
    statusCode: String(response.statusCode),
    responseHeaders,
    templates: { 'application/json': JSON.stringify(response.body) },
  };
}
