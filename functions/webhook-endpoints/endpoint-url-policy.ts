/**
 * Which URLs a webhook endpoint may have, as the stages and `npm start` set it: plain data, so
 * that what only names a policy (the functions' configuration) does not bundle the URL check.
 */

export interface EndpointUrlPolicy {
  /** Refuse `http:` (deployed stages). */
  readonly httpsOnly: boolean;
  /** Accept receivers on this machine's loopback: 127.0.0.0/8, ::1 and `localhost` (locally). */
  readonly allowLoopback: boolean;
  /** Name resolution: every address of a host name (the system resolver by default). */
  readonly resolve?: (hostname: string) => Promise<readonly string[]>;
}

/** The deployed stages' policy. */
export const deployedUrlPolicy: EndpointUrlPolicy = { httpsOnly: true, allowLoopback: false };

/** `npm start`'s default policy: http and this machine's loopback allowed too. */
export const localUrlPolicy: EndpointUrlPolicy = { httpsOnly: false, allowLoopback: true };

/** The longest URL an endpoint may have, as sent and as the URL parser writes it. */
export const maxUrlLength = 2048;
