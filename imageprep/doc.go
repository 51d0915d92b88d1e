// Package imageprep turns an encoded image (PNG, JPEG, GIF, WebP) into the
// pixel patches a Qwen vision tower reads, as the Hugging Face Qwen2-VL /
// Qwen3-VL image processor prepares them.
//
// Decode sniffs the format from the first bytes, reads the dimensions from
// the header and refuses an image over Limits before a pixel is decoded, so
// a decompression bomb costs a header read. Colours come out as Pillow's
// decoders give them (libjpeg-turbo's chroma upsampling and YCbCr tables,
// libwebp's upsampling and limited-range YUV), not Go's. It applies a JPEG's EXIF
// orientation (as transformers' load_image does with exif_transpose), takes
// a GIF's first frame, composites transparency over white (transformers'
// convert_to_rgb), and resizes an image of more than Limits.MaxPixels down,
// keeping its aspect ratio.
//
// Processor.Patches then applies smart_resize (both sides multiples of
// patch_size×merge_size, the area within min and max pixels), resizes with
// Pillow's bicubic filter bit for bit (ResizeBicubic), rescales and
// normalises with the preprocessor_config.json mean and std, and lays the
// pixels out as the processor's flattened patches.
//
// Every refusal is an *Error whose Kind tells the HTTP layer what to say
// (malformed, truncated, too large, unsupported); all are client errors.
package imageprep
