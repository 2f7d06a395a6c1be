/**
 * A PostgreSQL DATABASE_URL that cannot be used, said as an operator acts on it: which server and
 * database (never the password), what went wrong, and what to do. The driver's own words
 * ("connect ECONNREFUSED 127.0.0.1:5432", `database "salon" does not exist`) name neither the setting
 * nor the way on. Null for an error that is not the database's, or a DATABASE_URL that is not
 * PostgreSQL's: the command's own words are said then. Imports nothing, so that `booking mcp`'s entry
 * can say it too without loading the rest.
 */
export function postgresTrouble(error: unknown, databaseUrl: string | undefined): string | null {
  if (!databaseUrl || !/^postgres(ql)?:\/\//.test(databaseUrl)) return null;
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return null;
  }
  const host = url.hostname || 'localhost';
  const port = url.port || '5432';
  const where = `PostgreSQL at ${host}:${port} (DATABASE_URL)`;
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username);
  const user = decodeURIComponent(url.username) || 'of this account';
  const e = (error ?? {}) as { code?: unknown; port?: unknown; hostname?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';

  // A network error of another connection (an SMTP server, a webhook receiver) is not the database's.
  const elsewhere =
    (e.port !== undefined && String(e.port) !== port) ||
    (typeof e.hostname === 'string' && e.hostname !== host);
  if (!elsewhere) {
    if (code === 'ECONNREFUSED') {
      return `Cannot reach ${where}: the connection was refused. Start PostgreSQL there, or correct DATABASE_URL.`;
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return `Cannot reach ${where}: no host is named ${host}. Correct the host in DATABASE_URL.`;
    }
    if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') {
      return `Cannot reach ${where}: ${host} does not answer (${code}). Check the network and firewall, or correct DATABASE_URL.`;
    }
  }
  // SQLSTATE codes only PostgreSQL itself answers with.
  if (code === '3D000') {
    return `${where} has no database "${database}". Create it (createdb ${database}), or correct the database name in DATABASE_URL.`;
  }
  if (code === '28P01' || code === '28000') {
    return `${where} refused user "${user}": ${message}. Check the user and password in DATABASE_URL.`;
  }
  if (code === '53300' || code === '57P03') {
    return `${where} takes no more connections now: ${message}. Try again shortly, or lower PG_POOL_SIZE.`;
  }
  if (message === 'The server does not support SSL connections') {
    return `${where} does not speak SSL, which DATABASE_URL asks for (sslmode). Remove sslmode, or enable SSL on the server.`;
  }
  if (message.startsWith('SASL: ')) {
    return `${where} asks user "${user}" for a password: put it in DATABASE_URL (postgres://user:password@host:port/database).`;
  }
  if (message.startsWith('Connection terminated')) {
    return `Lost the connection to ${where}: ${message}. Check that PostgreSQL is running and reachable there.`;
  }
  return null;
}
