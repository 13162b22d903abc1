import { Aws, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
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
  /** The stage name, part of the Cognito domain so that stages never collide. */
  readonly stageName: string;
  /**
   * The API's scopes, `<resource server>/<scope>` (e.g. `plants/read`), each with what it grants;
   * they must share one resource server.
   */
  readonly scopes: Readonly<Record<string, string>>;
  readonly productionLike: boolean;
}

/** The authorizer's view of an issuer: the environment `functions/authorizer` reads. */
export interface AuthorizerEnvironment {
  readonly TOKEN_ISSUER: string;
  /** Comma-separated accepted audiences (or Cognito app client ids). */
  readonly TOKEN_AUDIENCE: string;
  /** `client_id` for Cognito access tokens (they carry no `aud`), `aud` otherwise. */
  readonly TOKEN_AUDIENCE_CLAIM: 'aud' | 'client_id';
  readonly JWKS_URI: string;
}

/**
 * Where the API's bearer tokens come from. By default a Cognito user pool made for
 * machine-to-machine use: a resource server granting the required scope, one app client for the
 * client-credentials grant and a hosted domain serving the token endpoint. Or an existing OIDC
 * issuer from the stage's configuration, of which only the URLs are recorded.
 */
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
    const { client, resourceServers } = this.addClient(userPool, props.scopes);
    // Cognito domain prefixes are unique per region across all AWS customers: the account id
    // makes this one unique without any configuration (it resolves at deploy time).
    const domain = userPool.addDomain('Domain', {
      cognitoDomain: {
        domainPrefix: `${config.domainPrefix ?? 'plant-store'}-${props.stageName}-${Aws.ACCOUNT_ID}`,
      },
    });
    // Pinned, and the issuer and JWKS URL derived from the same choice: Cognito has two issuer
    // formats, and a token whose `iss` is the other one is rejected (401 for every client).
    const issuerFormat = config.issuerFormat ?? 'ORIGINAL';
    const cfnUserPool = userPool.node.defaultChild as CfnUserPool;
    cfnUserPool.issuerConfiguration = { type: issuerFormat };
    const issuerHost = issuerFormat === 'UPDATED' ? 'issuer-cognito-idp' : 'cognito-idp';
    const issuerUrl = `https://${issuerHost}.${Aws.REGION}.${Aws.URL_SUFFIX}/${userPool.userPoolId}`;
    // Deleting the stack must not revoke every client's credentials: production-like stages
    // keep the client, its scopes and the domain along with the pool.
    if (props.productionLike) {
      for (const resource of [...resourceServers, client, domain]) {
        resource.applyRemovalPolicy(RemovalPolicy.RETAIN);
      }
    }
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
      // No user ever exists, but if an operator adds one by hand it gets a strong password
      // and a second factor, never SMS.
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
      // Deleting the pool invalidates every client's credentials: keep it in production.
      removalPolicy: productionLike ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    Validations.of(userPool).acknowledge({
      id: 'AwsSolutions::AwsSolutions-COG8',
      reason:
        'The Plus feature plan buys threat protection for interactive user sign-ins; this pool ' +
        'has no users and issues client-credentials tokens only, so it would cost without effect.',
    });
    return userPool;
  }

  /**
   * The scopes, one resource server per prefix (`plants`, `webhooks`; the first keeps the id it
   * always had), and the client-credentials client, which may ask for every scope (a token
   * carries only those it asks for, all of them when the token request names none).
   */
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

/**
 * `['plants/read', 'plants/write', 'webhooks/manage']` → `plants: [read, write], webhooks:
 * [manage]`: Cognito scopes are `<resource server>/<scope>`, one resource server per prefix.
 */
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
