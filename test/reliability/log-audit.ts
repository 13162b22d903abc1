/**
 * Checks a run's logs for what must never be in them: a token, an Authorization header's value,
 * a request body.
 */

/** Anything shaped like a JWT: base64url of `{"` followed by more base64url. */
const jwtShape = /eyJ[A-Za-z0-9_-]{10,}/;

/** A leak: the line and what it leaked. */
export interface LogLeak {
  readonly line: string;
  readonly leaked: string;
}

/**
 * The lines that contain a JWT-shaped string or any of `secrets` (tokens, Authorization values,
 * bodies, unique names). Secrets shorter than 8 characters are skipped: they would match by chance.
 */
export function findLogLeaks(lines: readonly string[], secrets: Iterable<string>): LogLeak[] {
  // Logs are JSON lines: a logged body would appear with its quotes escaped.
  const checked = [...new Set(secrets)]
    .filter((secret) => secret.length >= 8)
    .flatMap((secret) =>
      [secret, JSON.stringify(secret).slice(1, -1)].map((text) => ({ secret, text })),
    );
  const leaks: LogLeak[] = [];
  for (const line of lines) {
    const jwt = jwtShape.exec(line);
    if (jwt !== null) leaks.push({ line, leaked: jwt[0] });
    for (const { secret, text } of checked) {
      if (text.length <= line.length && line.includes(text)) leaks.push({ line, leaked: secret });
    }
  }
  return leaks;
}
