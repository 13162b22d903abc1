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
import {
  type Budgets,
  clientThrottling,
  preflightThrottling,
  routeThrottling,
  tokenLimits,
} from './throttling.ts';
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
  readonly webAclArn?: string;
  readonly manageCloudWatchRole?: boolean;
  readonly customDomain?: CustomDomainConfig;
  readonly allowedOrigins?: readonly string[];
}

/** Seconds API Gateway caches an authorizer's policy, which names every route a token may call. */
export const authorizerCacheSeconds = 300;

/** The access-log line: never the Authorization header, the body or the path as sent. */
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

/** The stage's usage plan, which the authorizer adds each client's API key to. */
export function usagePlanName(stageName: string): string {
  return `plant-store-${stageName}-clients`;
}

/** The REST API: every route behind the TOKEN authorizer, each with its own function. */
export class PlantsApi extends Construct {
  readonly restApi: RestApi;
  /** `https://…/<stage>/plants`. */
  plantsUrl: string;

  constructor(scope: Construct, id: string, props: PlantsApiProps) {
    super(scope, id);
    const budgets = {
      plants: props.throttling,
      ...(props.endpointThrottling && { webhookEndpoints: props.endpointThrottling }),
    };
    this.restApi = this.createRestApi(props, budgets);
    this.addClientUsagePlan(props, budgets, this.addRoutes(props));
    const allowedOrigins = props.allowedOrigins ?? [];
    const preflighted = allowedOrigins.length > 0 ? new Set(routes.map((route) => route.path)) : [];
    for (const path of preflighted) this.addPreflight(path, allowedOrigins);
    for (const shared of Object.values(gatewayResponses)) {
      this.restApi.addGatewayResponse(shared.type, gatewayResponseOptions(shared, allowedOrigins));
    }
    this.plantsUrl = this.restApi.urlForPath('/plants');
    if (props.customDomain !== undefined) this.plantsUrl = this.addCustomDomain(props.customDomain);
    this.protectWithWebAcl(props, budgets);
    this.acknowledgeFindings();
  }

  /** The API and its stage: regional, bodies binary, throttled, logged and traced. */
  private createRestApi(props: PlantsApiProps, budgets: Budgets): RestApi {
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    const preflights = preflightThrottling(budgets);
    return new RestApi(this, 'RestApi', {
      restApiName: `plant-store-${props.stageName}`,
      description:
        'Plant Store: add, list, read, change and delete plants with a bearer token, and manage webhook endpoints.',
      endpointTypes: [EndpointType.REGIONAL],
      // Bodies reach the functions exactly as sent (docs/decisions/binary-bodies.md).
      binaryMediaTypes: ['*/*'],
      // Each client's key comes from the authorizer (`usageIdentifierKey`), never from a header.
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // The account-wide logs role is retained: every API of the account shares it.
      ...(props.manageCloudWatchRole === false
        ? { cloudWatchRole: false }
        : { cloudWatchRole: true, cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN }),
      deployOptions: {
        stageName: props.stageName,
        // Each route its share; the preflights an even share of the plants budget.
        throttlingRateLimit: preflights.rateLimit,
        throttlingBurstLimit: preflights.burstLimit,
        methodOptions: Object.fromEntries(
          routes.map((route) => {
            const share = routeThrottling(route, budgets);
            return [
              `${route.path}/${route.method}`,
              { throttlingRateLimit: share.rateLimit, throttlingBurstLimit: share.burstLimit },
            ];
          }),
        ),
        tracingEnabled: true,
        metricsEnabled: true,
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.custom(JSON.stringify(accessLogFields)),
      },
    });
  }

  /** Every route: its function behind a proxy integration, the authorizer and the client's key. */
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
   * The usage plan that limits each client on each method, before the method's own limit
   * ("Throttle requests to your REST APIs", API Gateway developer guide). The authorizer adds a
   * client's key on first sight; the shared key counts those whose key could not be made.
   */
  private addClientUsagePlan(
    props: PlantsApiProps,
    budgets: Budgets,
    methods: readonly { route: (typeof routes)[number]; method: Method }[],
  ): void {
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
          'Naming the plan would make a cycle (the plan waits for the stage, whose methods wait ' +
          'for the authorizer): it finds the plan by name, and may only read plans and keys and add keys.',
      });
    props.authorizerFunction.addToRolePolicy(
      new PolicyStatement({
        actions: ['apigateway:GET', 'apigateway:POST'],
        resources: ['/usageplans', '/apikeys', '/usageplans/*/keys'].map((resource) =>
          Stack.of(this).formatArn({ service: 'apigateway', account: '', resource }),
        ),
      }),
    );
  }

  /** The stage's web ACL: the one the stage names, or its own with the per-token limits. */
  private protectWithWebAcl(props: PlantsApiProps, budgets: Budgets) {
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
          'AmazonAPIGatewayPushToCloudWatchLogs: the AWS-maintained policy for API Gateway’s logs role.',
      });
    Validations.of(this.restApi).acknowledge(
      {
        id: 'AwsSolutions::AwsSolutions-APIG2',
        reason:
          'The functions validate every request and name each failing field in the contract’s codes; ' +
          'an API Gateway validator would answer first, with codes and messages of its own.',
      },
      {
        id: 'AwsSolutions::AwsSolutions-COG4',
        reason:
          'The TOKEN authorizer verifies Cognito’s and any OIDC issuer’s tokens and answers 401/403 ' +
          'with the contract’s body; a Cognito authorizer could do neither.',
      },
    );
  }

  /**
   * A resource's CORS preflight, answered by API Gateway (a mock integration): the origin is
   * echoed, through `$context.responseOverride`, only when it is allowed.
   */
  private addPreflight(path: string, allowedOrigins: readonly string[]): void {
    const methods = routes.filter((route) => route.path === path).map((route) => route.method);
    const parameter = (header: string) => `method.response.header.${header}`;
    const responseParameters: Record<string, string> = Object.fromEntries(
      Object.entries({
        ...preflightHeaders(methods),
        ...protectiveHeaders(false),
        ...(allowedOrigins.includes('*') ? { 'Access-Control-Allow-Origin': '*' } : {}),
      }).map(([name, value]) => [parameter(name), `'${value}'`]),
    );
    const keys = [...Object.keys(responseParameters), parameter('Access-Control-Allow-Origin')];
    const declared = Object.fromEntries(keys.map((key) => [key, false]));
    const conditions = allowedOrigins.map((origin) => `$origin == "${origin}"`).join(' || ');
    const method = this.restApi.root.resourceForPath(path).addMethod(
      'OPTIONS',
      new MockIntegration({
        // Text, not the API's binary `*/*` (a preflight sends `Accept: */*`), so templates apply.
        contentHandling: ContentHandling.CONVERT_TO_TEXT,
        requestTemplates: { 'application/json': '{"statusCode": 204}' },
        integrationResponses: [
          {
            statusCode: '204',
            contentHandling: ContentHandling.CONVERT_TO_TEXT,
            responseParameters,
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
        'A CORS preflight carries no credentials (Fetch standard); API Gateway answers it from a mock.',
    });
  }

  /** The stage on the team's domain; the `next` links follow the host a request came in on. */
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

/** A shared gateway response as CDK options: header values quoted, the stage's CORS added. */
function gatewayResponseOptions(response: GatewayResponse, allowedOrigins: readonly string[]) {
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
