export { stateGitRoutes } from './routes.ts';
export { advertise, uploadPack, protocolOf, pktLine, type UploadPackOptions } from './upload-pack.ts';
