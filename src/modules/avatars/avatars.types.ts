export type { Asset } from '../../db/types.ts';

/** An asset as task results show it. */
export interface TaskResultAsset {
  asset_id: string;
  asset_url: string;
  status: 'Active' | 'Failed';
}
