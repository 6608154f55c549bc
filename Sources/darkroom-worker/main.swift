import DarkroomVideo
import DarkroomWorkers

// A decode worker: confines itself, then decodes what its parent sends on descriptor 3 (DarkroomWorkers'
// WorkerProcess starts it). Every format the library reads, videos included.
DecodeWorker.run(decoder: VideoDecoder.imageDecoder)
