import DarkroomImage
import DarkroomVideo
import DarkroomWorkers

// A decode worker: confines itself, then decodes what its parent sends on descriptor 3 (DarkroomWorkers'
// WorkerProcess starts it). Every format the library reads, videos and their motion previews included.
DecodeWorker.run(decoder: VideoDecoder.imageDecoder) { ranges, options, preview throws(DarkroomImageError) in
    try VideoAnimation(ranges: ranges, options: options, preview: preview)
}
