import { Aws, Duration, RemovalPolicy, Tags, Validations } from 'aws-cdk-lib';
import {
  AccountRecovery,
  type CfnUserPool,
  FeaturePlan,
  Mfa,
  OAuthScope,
  ResourceServerScope,
  UserPool,
  type UserPoolResourceServer,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import type { IssuerConfig } from './stages.ts';

export interface TokenIssuerProps {
  readonly config: IssuerConfig;
  readonly stageName: string;
  /** `<resource server>/<scope>` (`plants/read`), each with what it grants. */
  readonly scopes: Readonly<Record<string, string>>;
  readonly productionLike: boolean;
}

/** The authorizer's view of an issuer: the environment `functions/authorizer` reads. */
export interface AuthorizerEnvironment {
  readonly TOKEN_ISSUER: string;
  /** Comma-separated; Cognito access tokens carry no `aud`, but `client_id`. */
  readonly TOKEN_AUDIENCE: string;
  readonly TOKEN_AUDIENCE_CLAIM: 'aud' | 'client_id';
  readonly JWKS_URI: string;
}

/** Where tokens come from: a machine-to-machine Cognito pool by default, or an OIDC issuer. */
export class TokenIssuer extends Construct {
  readonly authorizerEnvironment: AuthorizerEnvironment;
  /** Where clients get tokens (`POST …/oauth2/token`), when known. */
  readonly tokenUrl: string | undefined;
  /** The client-credentials app client, for Cognito issuers. */
  readonly clientId: string | undefined;

  constructor(scope: Construct, id: string, props: TokenIssuerProps) {
    super(scope, id);
    const { config } = props;
    if (config.kind === 'oidc') {
      const audiences = typeof config.audience === 'string' ? [config.audience] : config.audience;
      this.authorizerEnvironment = {
        TOKEN_ISSUER: config.issuerUrl,
        TOKEN_AUDIENCE: audiences.join(','),
        TOKEN_AUDIENCE_CLAIM: 'aud',
        JWKS_URI: config.jwksUri ?? `${config.issuerUrl.replace(/\/$/, '')}/.well-known/jwks.json`,
      };
      this.tokenUrl = config.tokenUrl;
      this.clientId = undefined;
      return;
    }

    const userPool = this.createUserPool(props.productionLike);

    // The tag that lets the stage's deploy role read its app client (infra/pipeline-access.ts).
    Tags.of(userPool).add('stage', props.stageName);
    const { client, resourceServers } = this.addClient(userPool, props.scopes);
    // Domain prefixes are unique per region across AWS: the account id makes this one unique.
    const domain = userPool.addDomain('Domain', {
      cognitoDomain: {
        domainPrefix: `${config.domainPrefix ?? 'plant-store'}-${props.stageName}-${Aws.ACCOUNT_ID}`,
      },
    });
    // Pinned: the issuer and JWKS URL are derived from it, and the other format's `iss` is refused.
    const issuerFormat = config.issuerFormat ?? 'ORIGINAL';
    const cfnUserPool = userPool.node.defaultChild as CfnUserPool;
    cfnUserPool.issuerConfiguration = { type: issuerFormat };
    const issuerHost = issuerFormat === 'UPDATED' ? 'issuer-cognito-idp' : 'cognito-idp';
    const issuerUrl = `https://${issuerHost}.${Aws.REGION}.${Aws.URL_SUFFIX}/${userPool.userPoolId}`;
    // Deleting the stack must not revoke every client's credentials.
    const retained = props.productionLike ? [...resourceServers, client, domain] : [];
    for (const resource of retained) resource.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.authorizerEnvironment = {
      TOKEN_ISSUER: issuerUrl,
      TOKEN_AUDIENCE: client.userPoolClientId,
      TOKEN_AUDIENCE_CLAIM: 'client_id',
      JWKS_URI: `${issuerUrl}/.well-known/jwks.json`,
    };
    this.tokenUrl = `${domain.baseUrl()}/oauth2/token`;
    this.clientId = client.userPoolClientId;
  }

  /** A pool for machines only: nobody signs up or in, clients use their id and secret. */
  private createUserPool(productionLike: boolean): UserPool {
    const userPool = new UserPool(this, 'UserPool', {
      selfSignUpEnabled: false,
      featurePlan: FeaturePlan.LITE,
      // If an operator ever adds a user: a strong password and a second factor, never SMS.
      passwordPolicy: {
        minLength: 14,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(1),
      },
      mfa: Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      accountRecovery: AccountRecovery.NONE,
      deletionProtection: productionLike,
      removalPolicy: productionLike ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    Validations.of(userPool).acknowledge({
      id: 'AwsSolutions::AwsSolutions-COG8',
      reason:
        'The Plus plan protects interactive sign-ins; this pool has no users, only client tokens.',
    });
    return userPool;
  }

  /** One resource server per scope prefix, and the client-credentials client with every scope. */
  private addClient(userPool: UserPool, scopeDescriptions: Readonly<Record<string, string>>) {
    const resourceServers: UserPoolResourceServer[] = [];
    const servers = groupScopes(Object.keys(scopeDescriptions));
    const clientScopes = [...servers].flatMap(([identifier, scopeNames], index) => {
      const scopes = scopeNames.map(
        (scopeName) =>
          new ResourceServerScope({
            scopeName,
            scopeDescription: scopeDescriptions[`${identifier}/${scopeName}`] as string,
          }),
      );
      const server = userPool.addResourceServer(
        index === 0 ? 'ResourceServer' : `ResourceServer-${identifier}`,
        { identifier, scopes },
      );
      resourceServers.push(server);
      return scopes.map((scope) => OAuthScope.resourceServer(server, scope));
    });
    const client = userPool.addClient('ClientCredentialsClient', {
      generateSecret: true,
      oAuth: { flows: { clientCredentials: true }, scopes: clientScopes },
      accessTokenValidity: Duration.hours(1),
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
    });
    return { client, resourceServers };
  }
}

/** `plants/read`, `webhooks/manage` → `plants: [read], webhooks: [manage]`: a server a prefix. */
function groupScopes(scopes: readonly string[]): Map<string, string[]> {
  const servers = new Map<string, string[]>();
  for (const scope of scopes) {
    const separator = scope.lastIndexOf('/');
    if (separator <= 0 || separator === scope.length - 1) {
      throw new Error(`The scope "${scope}" must look like <resource server>/<scope>.`);
    }
    const server = scope.slice(0, separator);
    servers.set(server, [...(servers.get(server) ?? []), scope.slice(separator + 1)]);
  }
  return servers;
}
