// Kernel Tuner's OpenCL 2-D convolution example, in kforge's portable dialect.
// output[y][x] = sum_{i<filter_height, j<filter_width} input[y+i][x+j] * filter[i][j]
// over an (image_height + filter_height - 1) x (image_width + filter_width - 1)
// input. Each work-group stages its input tile plus the halo in local memory;
// each work-item computes tile_size_y x tile_size_x outputs, a block apart.
// The image size is a kernel argument; the filter size stays a compile-time
// constant (it sizes the local tile), tied to the problem by the envelope.
#ifndef block_size_x
#define block_size_x 16  // work-items per work-group along x
#endif
#ifndef block_size_y
#define block_size_y 16  // work-items per work-group along y
#endif
#ifndef tile_size_x
#define tile_size_x 1  // outputs per work-item along x
#endif
#ifndef tile_size_y
#define tile_size_y 1  // outputs per work-item along y
#endif
#ifndef use_padding
#define use_padding 1  // pad each local row by one float
#endif
#ifndef filter_width
#define filter_width 17
#endif
#ifndef filter_height
#define filter_height 17
#endif

#define border_width (filter_width - 1)
#define border_height (filter_height - 1)
#define sh_height (block_size_y * tile_size_y + border_height)
#define sh_width (block_size_x * tile_size_x + border_width)
#if use_padding == 1
#define sh_pitch (sh_width + 1)
#else
#define sh_pitch sh_width
#endif

KF_KERNEL void KF_KERNEL_NAME(const int image_width, const int image_height, const int filter_w_unused,
                              const int filter_h_unused, KF_GLOBAL float* KF_RESTRICT output,
                              KF_GLOBAL const kf_in_t* KF_RESTRICT input,
                              KF_GLOBAL const float* KF_RESTRICT filter) {
  KF_LOCAL float sh_input[sh_height][sh_pitch];
  const int input_width = image_width + border_width;
  const int input_height = image_height + border_height;
  const int ty = KF_THREAD_Y;
  const int tx = KF_THREAD_X;
  const int by = KF_BLOCK_Y * block_size_y * tile_size_y;
  const int bx = KF_BLOCK_X * block_size_x * tile_size_x;

  // Stage the tile and its halo; rows and columns past the input stay unset
  // and feed only outputs past the image, which are not stored.
  for (int i = ty; i < sh_height; i += block_size_y) {
    for (int j = tx; j < sh_width; j += block_size_x) {
      const int y = by + i;
      const int x = bx + j;
      if (y < input_height && x < input_width) sh_input[i][j] = KF_LOAD_IN(input, (size_t)y * input_width + x);
    }
  }
  KF_BARRIER();

  float sum[tile_size_y][tile_size_x];
  for (int yi = 0; yi < tile_size_y; ++yi)
    for (int xi = 0; xi < tile_size_x; ++xi) sum[yi][xi] = 0.0f;

  for (int i = 0; i < filter_height; ++i) {
    for (int j = 0; j < filter_width; ++j) {
      const float f = filter[i * filter_width + j];
      KF_UNROLL for (int yi = 0; yi < tile_size_y; ++yi) {
        KF_UNROLL for (int xi = 0; xi < tile_size_x; ++xi) {
          sum[yi][xi] += sh_input[ty + yi * block_size_y + i][tx + xi * block_size_x + j] * f;
        }
      }
    }
  }

  for (int yi = 0; yi < tile_size_y; ++yi) {
    for (int xi = 0; xi < tile_size_x; ++xi) {
      const int y = by + ty + yi * block_size_y;
      const int x = bx + tx + xi * block_size_x;
      if (y < image_height && x < image_width) output[(size_t)y * image_width + x] = sum[yi][xi];
    }
  }
}
