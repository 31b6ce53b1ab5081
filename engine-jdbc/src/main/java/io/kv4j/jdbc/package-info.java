/**
 * The {@code postgres} and {@code mysql} engines: a store is one table on a SQL server, reached
 * through JDBC with a HikariCP connection pool. Only {@link io.kv4j.jdbc.PostgresProvider} and
 * {@link io.kv4j.jdbc.MysqlProvider} are public.
 *
 * <p>Thread-safety: a store is safe for use from many threads; each operation borrows a pooled
 * connection for its duration. A batch is one transaction. A cursor is a repeatable-read read-only
 * transaction on its own connection, so it sees the table as of its opening; it returns its
 * connection as soon as all rows were fetched. One store per table: opening takes a server-side
 * lock (PostgreSQL advisory lock, MySQL {@code GET_LOCK}) held on a dedicated connection.
 *
 * <p>Ordering: keys are binary strings the server compares byte by byte as unsigned values, a
 * shorter key first on a common prefix, which is {@link java.util.Arrays#compareUnsigned(byte[],
 * byte[])} order; scans run in that order, ascending or descending.
 */
package io.kv4j.jdbc;
