/* skip_next_call(): conifer_slice_skip() for tests/fakes_f/fakes.f90, when the recorder
 * defines it (a weak reference, which Fortran cannot declare). */
void conifer_slice_skip(void) __attribute__((weak));

void skip_next_call_(void)
{
    if (conifer_slice_skip)
        conifer_slice_skip();
}
