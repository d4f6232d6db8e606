export {
  ProviderPublisher,
  type ProviderStateSink,
  type PublishedProvider,
  type PublisherLogger,
  type PublisherOptions,
} from "./publisher.js";
