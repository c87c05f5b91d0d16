/**
 * Provisions Temporal's Java test server (time skipping) for tests of flows that wait hours
 * or days. The SDK's own download is unavailable on machines that reach package registries
 * only, so the project fetches io.temporal:temporal-test-server and its dependencies from
 * Maven Central with `mvn` (default settings of the machine) into the cache outside the
 * clone, and writes a wrapper that `exec`s java, so that the SDK's kill stops the JVM itself.
 * Use the wrapper as
 * `TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } })`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../src/ports';
import { cacheRoot, isExecutable, stderrLine, withDirLock } from './cache';

/** Java SDK release whose test server serves the API the TS SDK 1.24 speaks (checked by test/time-skipping.test.ts). */
export const JAVA_TEST_SERVER_VERSION = '1.38.0';
export const JAVA_TEST_SERVER_MAIN = 'io.temporal.testserver.TestServer';
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

export class JavaTestServerUnavailable extends Error {
  readonly type = 'JavaTestServerUnavailable';
}

export function javaTestServerCacheDir(): string {
  return join(cacheRoot(), 'java-test-server', JAVA_TEST_SERVER_VERSION);
}

/** The wrapper script to hand to the SDK (takes the port as its first argument). */
export function javaTestServerWrapperPath(): string {
  return join(javaTestServerCacheDir(), 'temporal-test-server');
}

function libDir(): string {
  return join(javaTestServerCacheDir(), 'lib');
}

/** Written last, so that a fetch cut short is never mistaken for a complete one. */
function completeMarker(): string {
  return join(javaTestServerCacheDir(), '.complete');
}

/** The wrapper's path when the jars are already in the cache, otherwise undefined. */
export function findJavaTestServer(): string | undefined {
  return existsSync(completeMarker()) && isExecutable(javaTestServerWrapperPath()) ? javaTestServerWrapperPath() : undefined;
}

/** Fetches the jars once per machine and returns the wrapper's path; progress goes to `log` (stderr by default). */
export async function ensureJavaTestServer(log: (line: string) => void = stderrLine): Promise<string> {
  const missing = javaTestServerMissing();
  if (missing) throw new JavaTestServerUnavailable(`Java test server (time skipping) unavailable: install ${missing}`);
  const found = findJavaTestServer();
  if (found && existsSync(classArchive())) return found;
  return withDirLock(join(javaTestServerCacheDir(), '.fetch-lock'), async () => {
    // Another process may have finished the fetch (and the archive) while we waited for the lock.
    const done = findJavaTestServer();
    if (done && existsSync(classArchive())) return done;
    if (!done) await mavenFetch(log);
    await buildClassArchive(log);
    writeWrapper();
    writeFileSync(completeMarker(), `${new Date().toISOString()}\n`);
    return javaTestServerWrapperPath();
  });
}

/**
 * The JVM's class-data archive of the server's classes (AppCDS): loaded from it, the server listens in
 * about 2 s on a loaded 2-core machine instead of 8 to 11 s, and the SDK's core gives it a fixed 5 s
 * ("ephemeral server … did not start within 5s": test/time-skipping.test.ts failed so in CI under 4 jest
 * workers). Made once per machine by a run of the server that dumps the classes it loaded at its exit.
 */
function classArchive(): string {
  return join(javaTestServerCacheDir(), 'classes.jsa');
}

async function buildClassArchive(log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const staging = `${classArchive()}.partial`;
  rmSync(staging, { force: true });
  const port = await freePort();
  const jvm = spawn('java', [`-XX:ArchiveClassesAtExit=${staging}`, '-cp', `${libDir()}/*`, JAVA_TEST_SERVER_MAIN, String(port), '--enable-time-skipping'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => jvm.on('close', () => resolve()));
  const listening = await untilListening(port, 120_000);
  // The archive is written as the JVM exits on SIGTERM (its shutdown runs), with every class it loaded to listen.
  jvm.kill('SIGTERM');
  await exited;
  if (!listening || !existsSync(staging)) {
    rmSync(staging, { force: true });
    log('Java test server: no class-data archive made (the server starts without it, more slowly)');
    return;
  }
  renameSync(staging, classArchive());
  log(`Java test server: class-data archive made in ${Math.round((Date.now() - started) / 1000)} s`);
}

async function untilListening(port: number, withinMs: number): Promise<boolean> {
  for (const deadline = Date.now() + withinMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (open) return true;
  }
  return false;
}

/**
 * What this machine lacks to run the Java test server, in words (`Java (java on PATH) and Maven
 * (mvn on PATH)`), or undefined when it lacks nothing. Java runs the server; Maven is needed only
 * until the jars are in the cache. Both are optional for the project: without them the
 * time-skipping tests are skipped (tools/provision.ts, test/time-skipping.test.ts).
 */
export function javaTestServerMissing(): string | undefined {
  const missing: string[] = [];
  if (!runs('java', ['-version'])) missing.push('a Java runtime (java on PATH, version 8 or later)');
  if (!findJavaTestServer() && !runs('mvn', ['-v'])) missing.push('Maven (mvn on PATH), which fetches the jars from Maven Central');
  return missing.length === 0 ? undefined : missing.join(' and ');
}

function runs(cmd: string, args: string[]): boolean {
  const res = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return !res.error && res.status === 0;
}

function pom(): string {
  const [pluginGroup, pluginArtifact, pluginVersion] = DEPENDENCY_PLUGIN.split(':');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by tools/java-test-server.ts: fetches the Java test server's runtime classpath. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.card-issuing</groupId>
  <artifactId>java-test-server-fetch</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>${JAVA_TEST_SERVER_VERSION}</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><groupId>${pluginGroup}</groupId><artifactId>${pluginArtifact}</artifactId><version>${pluginVersion}</version></plugin>
    </plugins>
  </build>
</project>
`;
}

function mavenFetch(log: (line: string) => void): Promise<void> {
  const dir = javaTestServerCacheDir();
  const staging = join(dir, 'lib.partial');
  rmSync(staging, { recursive: true, force: true });
  writeFileSync(join(dir, 'pom.xml'), pom());
  log(`Fetching the Java test server ${JAVA_TEST_SERVER_VERSION} and its dependencies with Maven (once per machine) into ${dir} ...`);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      'mvn',
      ['-B', '-q', '-f', join(dir, 'pom.xml'), `${DEPENDENCY_PLUGIN}:copy-dependencies`, `-DoutputDirectory=${staging}`, '-DincludeScope=runtime'],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let tail = '';
    const keep = (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => reject(new JavaTestServerUnavailable(`could not run mvn: ${err.message}`)));
    child.on('close', (code) => {
      const jars = existsSync(staging) ? readdirSync(staging).filter((f) => f.endsWith('.jar')) : [];
      if (code !== 0 || !jars.some((f) => f.startsWith(`temporal-test-server-${JAVA_TEST_SERVER_VERSION}`))) {
        reject(new JavaTestServerUnavailable(`mvn could not fetch io.temporal:temporal-test-server:${JAVA_TEST_SERVER_VERSION} (exit ${code}):\n${tail.trim()}`));
        return;
      }
      rmSync(libDir(), { recursive: true, force: true });
      renameSync(staging, libDir());
      log(`Java test server fetched in ${Math.round((Date.now() - started) / 1000)} s (${jars.length} jars)`);
      resolve();
    });
  });
}

/**
 * `exec` replaces the shell, so the PID the SDK kills on teardown is the JVM's. With the class-data
 * archive when there is one (-Xshare:auto: a stale one is ignored, not fatal), C1 only and the serial
 * collector: a test server lives seconds, and starting fast is what counts.
 */
function writeWrapper(): void {
  const quote = (path: string) => `'${path.replace(/'/g, `'\\''`)}'`;
  const archive = existsSync(classArchive()) ? `-XX:SharedArchiveFile=${quote(classArchive())} -Xshare:auto ` : '';
  writeFileSync(javaTestServerWrapperPath(), `#!/bin/sh\nexec java ${archive}-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp ${quote(`${libDir()}/*`)} ${JAVA_TEST_SERVER_MAIN} "$@"\n`);
  chmodSync(javaTestServerWrapperPath(), 0o755);
}

