/**
 * Where PGlite keeps its cluster inside MKOBA_DATA_DIR, and a first start that survives being killed.
 * PGlite creates a cluster by unpacking about a thousand files, PG_VERSION among the first; a process
 * stopped half-way (Ctrl-C during the first `npm start`) leaves a directory that PGlite takes for a
 * database and then cannot open. So a new cluster is built in a staging directory and renamed into
 * place only once it is complete. The caller holds the data directory's lock.
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { openPgliteStore } from './pglite.ts';
import type { Store } from './store.ts';

export const PGLITE_CLUSTER_DIR_NAME = 'pgdata';
const PGLITE_STAGING_DIR_NAME = 'pgdata.partial';

/** Data directories made before the pgdata/ layout hold their cluster at the top level. */
function hasTopLevelCluster(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'PG_VERSION'));
}

/** Whether the data directory already holds a database, so that opening it will not create one. */
export function pgliteDatabaseExists(dataDir: string): boolean {
  return hasTopLevelCluster(dataDir) || existsSync(path.join(dataDir, PGLITE_CLUSTER_DIR_NAME));
}

export async function openPgliteDataDir(dataDir: string): Promise<Store> {
  if (hasTopLevelCluster(dataDir)) return openPgliteStore(dataDir);
  const clusterDir = path.join(dataDir, PGLITE_CLUSTER_DIR_NAME);
  if (!existsSync(clusterDir)) {
    const stagingDir = path.join(dataDir, PGLITE_STAGING_DIR_NAME);
    rmSync(stagingDir, { recursive: true, force: true });
    const staging = await openPgliteStore(stagingDir);
    await staging.close();
    renameSync(stagingDir, clusterDir);
  }
  return openPgliteStore(clusterDir);
}
