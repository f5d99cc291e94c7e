// The sources compiled once into one JavaScript file, cached by what they are, so that a process starts
// without compiling TypeScript module by module. Loading the application through tsx's loader thread took
// about twice the CPU at every start, and 20–40 MB more memory in a freshly started server, than the same
// code compiled (docs/DECISIONS.md, The sources compiled once); tsx stays the fallback, and the tests load
// the sources directly.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPOSITORY_DIR = fileURLToPath(new URL('../', import.meta.url));
const SOURCE_DIR = path.join(REPOSITORY_DIR, 'src');
const CACHE_DIR = path.join(REPOSITORY_DIR, 'node_modules', '.cache', 'mkoba-compiled');
const ENTRY = path.join(SOURCE_DIR, 'cli', 'main.ts');
const COMPILED_FILE = 'mkoba.js';
/**
 * How long an older compilation is kept: a process reads its one file only while it starts (the lazily
 * imported modules are inside it), so an hour is far more than any start takes.
 */
const OLD_COMPILATION_KEPT_MS = 60 * 60 * 1000;

/** This file's text: how the sources are compiled (esbuild's options) is part of what a compilation is. */
const COMPILER_TEXT = readFileSync(fileURLToPath(import.meta.url), 'utf8');

/**
 * What a compilation depends on: every source file's path, size and modification time, Node's version,
 * esbuild's, and this compiler's own text. A file edited, added or removed, or a compile option changed,
 * gives another fingerprint, so a compilation is never stale.
 */
export function fingerprintOf(sourceDir, esbuildVersion, compilerText = COMPILER_TEXT) {
  const hash = createHash('sha256')
    .update(`${process.version} esbuild ${esbuildVersion}\n`)
    .update(createHash('sha256').update(compilerText).digest('hex'));
  const files = readdirSync(sourceDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name))
    .sort();
  for (const file of files) {
    const { size, mtimeMs } = statSync(file);
    hash.update(`${path.relative(sourceDir, file)} ${size} ${mtimeMs}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Each module's `import.meta.url` stays its source file's, as under tsx: modules find files beside their
 * source (migrations, the console's assets, sample data), wherever the compiled file lands.
 */
const keepSourceUrls = {
  name: 'keep-source-urls',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replaceAll(
        'import.meta.url',
        JSON.stringify(pathToFileURL(args.path).href),
      ),
      loader: 'ts',
    }));
  },
};

/**
 * One file with every module, those imported lazily too: a running process never reads the cache again, so
 * a newer compilation may replace this one under it.
 */
async function compile(esbuild, outdir) {
  const staging = `${outdir}.${process.pid}.tmp`;
  await esbuild.build({
    entryPoints: [ENTRY],
    outfile: path.join(staging, COMPILED_FILE),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node.split('.')[0]}`,
    packages: 'external',
    sourcemap: 'linked',
    // Stack traces need only the mappings: the sources are on disk beside. Their text in the map would be
    // kept in every process's heap (some 4 MB) once Node reads the map.
    sourcesContent: false,
    logLevel: 'silent',
    plugins: [keepSourceUrls],
  });
  try {
    renameSync(staging, outdir);
  } catch (error) {
    // Another process compiled the same sources first: theirs serves.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(outdir)) throw error;
  }
}

function removeOldCompilations(current) {
  const before = Date.now() - OLD_COMPILATION_KEPT_MS;
  for (const entry of readdirSync(CACHE_DIR, { withFileTypes: true })) {
    const dir = path.join(CACHE_DIR, entry.name);
    if (entry.isDirectory() && entry.name !== current && statSync(dir).mtimeMs < before) {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/**
 * The CLI's `main` from the compiled sources, compiling them first when they changed; undefined when they
 * cannot be compiled or cached here (no esbuild, a read-only directory), and the caller loads the sources
 * through tsx instead.
 */
export async function compiledMain() {
  if (process.env.MKOBA_COMPILE === '0') return undefined;
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined;
  }
  try {
    const outdir = path.join(CACHE_DIR, fingerprintOf(SOURCE_DIR, esbuild.version));
    const entry = path.join(outdir, COMPILED_FILE);
    if (!existsSync(entry)) {
      mkdirSync(CACHE_DIR, { recursive: true });
      await compile(esbuild, outdir);
      removeOldCompilations(path.basename(outdir));
    }
    process.setSourceMapsEnabled(true);
    return (await import(pathToFileURL(entry).href)).main;
  } catch (error) {
    process.stderr.write(
      `mkoba: running the sources through tsx (compiling them failed: ${error.message})\n`,
    );
    return undefined;
  }
}
